import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { TimeoutError, type Subscription } from '@nats-io/transport-node';
import {
  RPC_CALLERS,
  RPC_REPEATABLE,
  rpcError,
  type RpcContracts,
  type RpcReply,
  type RpcRequestOf,
  type RpcSubject,
} from '@byrd/contracts';
import { ApiError, ErrorKind, kindOfCode } from '../errors/api-error.js';
import { toApiError } from '../errors/error-body.js';
import type { NatsContext } from '../messaging/nats.js';
import { NATS_CONTEXT, RPC_IDENTITY, SERVICE_NAME } from '../messaging/tokens.js';
import type { RpcIdentity, SealedRpcReply } from './rpc-identity.js';
import {
  contextFromHeaders,
  inSpan,
  natsTraceHeaders,
  SpanKind,
  SpanStatusCode,
  startSpan,
  type Span,
} from '../tracing/tracing.js';

type RpcResponseOf<S extends RpcSubject> = RpcContracts[S]['response'];

const DEFAULT_TIMEOUT_MS = 5_000;
/** Tries of a repeatable subject within its timeout (each gets an equal share of it). */
const REPEATABLE_TRIES = 3;

/**
 * Request/reply between services on `rpc.<service>.<verb>` subjects (never a stream's subjects).
 * Handlers answer with a tagged reply, so domain errors cross the wire with their code. Subjects
 * listed in RPC_CALLERS are authenticated: requests are signed by the caller's RpcIdentity, only
 * the listed services are served, and replies are encrypted to the caller.
 */
@Injectable()
export class Rpc implements BeforeApplicationShutdown {
  private readonly logger = new Logger(Rpc.name);
  private readonly subscriptions: Subscription[] = [];

  constructor(
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(SERVICE_NAME) private readonly serviceName: string,
    @Inject(RPC_IDENTITY) private readonly identity: RpcIdentity,
  ) {}

  /** Serves a subject; replicas share the load through a queue group named after the service. */
  serve<S extends RpcSubject>(
    subject: S,
    handler: (request: RpcRequestOf<S>, caller: string | null) => Promise<RpcResponseOf<S>>,
  ): void {
    const allowedCallers: readonly string[] | undefined = RPC_CALLERS[subject];
    const subscription = this.nats.nc.subscribe(this.nats.subject(subject), {
      queue: this.serviceName,
      callback: (error, message) => {
        if (error) return this.logger.error(`${subject}: ${error.message}`);
        const span = startSpan(subject, SpanKind.SERVER, contextFromHeaders(message.headers), {
          'rpc.system': 'nats',
          'rpc.method': subject,
        });
        void inSpan(span, async () => {
          let reply: RpcReply<RpcResponseOf<S>> | SealedRpcReply;
          try {
            if (allowedCallers) {
              const signed = await this.identity.verify<RpcRequestOf<S>>(
                subject,
                message.json(),
                allowedCallers,
              );
              const data = await handler(signed.request, signed.caller).then(
                (result): RpcReply<RpcResponseOf<S>> => ({ ok: true, data: result }),
                (failure: unknown) => this.errorReply(subject, failure, span),
              );
              reply = await this.identity.seal(data, signed.replyKey);
            } else {
              reply = { ok: true, data: await handler(message.json<RpcRequestOf<S>>(), null) };
            }
          } catch (failure) {
            // Refused callers get the reason in clear: there is nothing to protect in it.
            reply = this.errorReply(subject, failure, span);
          }
          message.respond(JSON.stringify(reply));
        });
      },
    });
    this.subscriptions.push(subscription);
  }

  /**
   * Calls a subject; a domain error of the other side is re-thrown here as the same ApiError. A
   * repeatable subject (RPC_REPEATABLE) is asked up to REPEATABLE_TRIES times within `timeoutMs`,
   * again whenever a try gets no answer: the queue group hands each try to a replica at random, so a
   * paused replica costs one try, not the call.
   */
  async call<S extends RpcSubject>(
    subject: S,
    request: RpcRequestOf<S>,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): Promise<RpcResponseOf<S>> {
    const tries = RPC_REPEATABLE.has(subject) ? REPEATABLE_TRIES : 1;
    const authenticated = RPC_CALLERS[subject] !== undefined;
    let answer: RpcReply<RpcResponseOf<S>> | SealedRpcReply | undefined;
    for (let attempt = 1; answer === undefined; attempt++) {
      // Signed anew for each try: a served side accepts a signed request once.
      const body = authenticated ? await this.identity.sign(subject, request) : request;
      try {
        answer = await this.ask(subject, body, timeoutMs / tries);
      } catch (error) {
        if (attempt < tries && error instanceof TimeoutError) continue;
        throw new ApiError(ErrorKind.Unavailable, `${subject} did not answer: ${(error as Error).message}`);
      }
    }
    if ('jwe' in answer) answer = await this.identity.open<RpcResponseOf<S>>(answer);
    if (answer.ok) return answer.data;
    const { code, message, errors } = answer.error;
    throw new ApiError(kindOfCode(code), message, { code, errors });
  }

  /** One request (as sent: signed or plain) and its reply. */
  private async ask<S extends RpcSubject>(
    subject: S,
    body: unknown,
    timeoutMs: number,
  ): Promise<RpcReply<RpcResponseOf<S>> | SealedRpcReply> {
    const message = await this.nats.nc.request(this.nats.subject(subject), JSON.stringify(body), {
      timeout: timeoutMs,
      // The caller's trace context: the served side's span joins its trace.
      headers: natsTraceHeaders(),
    });
    return message.json<RpcReply<RpcResponseOf<S>> | SealedRpcReply>();
  }

  private errorReply(subject: string, failure: unknown, span: Span): RpcReply<never> {
    const apiError = toApiError(failure);
    if (apiError.kind === ErrorKind.Internal) this.logger.error(`${subject} failed: ${String(failure)}`);
    span.setStatus({ code: SpanStatusCode.ERROR, message: apiError.code });
    return rpcError(apiError.code, apiError.message, apiError.errors);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.drain()));
  }
}
