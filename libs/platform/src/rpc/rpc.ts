import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { headers, TimeoutError, type Msg, type Subscription } from '@nats-io/transport-node';
import {
  RPC_CALLER_HEADER,
  RPC_CALLERS,
  RPC_REPEATABLE,
  RPC_REQUEST_ID_HEADER,
  RPC_SEALED_REQUESTS,
  RPC_SERVED_BY,
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
import {
  rpcRequestHashOf,
  rpcRequestIdOf,
  type RpcIdentity,
  type SealedRpcReply,
  type SignedRpcReply,
} from './rpc-identity.js';
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
/** Most tries of a repeatable subject within one call's timeout. */
const MAX_TRIES = 6;
/** No try is repeated sooner than this, however fast the subject usually answers. */
const MIN_REPEAT_AFTER_MS = 100;
/**
 * A try is repeated after this many times the subject's usual answer time, and each further wait
 * doubles: a subject that answers slowly (an overloaded service) gets fewer repeats, not more.
 */
const REPEAT_AFTER_USUAL_TIMES = 4;
/** Weight of the newest answer time in a subject's usual one (exponential moving average). */
const USUAL_WEIGHT = 0.2;
/**
 * Retry throttling, as gRPC does it: each subject has up to MAX_REPEAT_TOKENS tokens; a call that
 * gets no answer takes one, an answered call gives back REPEAT_TOKENS_PER_ANSWER, and tries are
 * repeated only while more than half are left. A paused replica leaves calls answered (the tokens
 * stay full); a service answering nothing in time gets one try per call, not six.
 */
const MAX_REPEAT_TOKENS = 10;
const REPEAT_TOKENS_PER_ANSWER = 0.1;

type Answer<S extends RpcSubject> = RpcReply<RpcResponseOf<S>>;

/**
 * A request as sent, and the id its reply must name: the jti of a signed request, or a fresh id
 * sent in a header beside an unsigned one (`inClear`).
 */
interface Sent {
  body: unknown;
  requestId?: string;
  inClear?: boolean;
}

/** What one reply to a try is worth: the answer, or why it is not believed. */
type Judged<S extends RpcSubject> =
  { answer: Answer<S> } | { refused: UnauthenticatedReply; unsignedRefusal?: Answer<S> };

/** A reply refused: not signed by the service serving the subject (another client of the broker). */
class UnauthenticatedReply extends Error {}

/**
 * Request/reply between services on `rpc.<service>.<verb>` subjects (never a stream's subjects).
 * Handlers answer with a tagged reply, so domain errors cross the wire with their code. Subjects
 * listed in RPC_CALLERS are authenticated: requests are signed by the caller's RpcIdentity, only
 * the listed services are served, and replies are signed by the serving service (RPC_SERVED_BY) for
 * that request and encrypted to the caller. Replies of the other subjects are signed by their
 * serving service too, in clear, for the id and bytes of the request: a caller believes no other.
 */
@Injectable()
export class Rpc implements BeforeApplicationShutdown {
  private readonly logger = new Logger(Rpc.name);
  private stopping?: Promise<void>;
  private readonly subscriptions: Subscription[] = [];
  /** Requests being handled: a shutdown answers them before the connection and the pool close. */
  private readonly handling = new Set<Promise<void>>();
  /** What this process knows of each subject it has called (its counts are exported at `/metrics`). */
  readonly statsBySubject = new Map<RpcSubject, RpcSubjectStats>();

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
    if (RPC_SERVED_BY[subject] !== undefined && !this.identity.canSign) {
      this.logger.error(
        `${subject}: ${this.serviceName} has no RPC_SIGNING_KEY, so its callers refuse every answer`,
      );
    }
    const subscription = this.nats.nc.subscribe(this.nats.subject(subject), {
      queue: this.serviceName,
      callback: (error, message) => {
        if (error) return this.logger.error(`${subject}: ${error.message}`);
        const span = startSpan(subject, SpanKind.SERVER, contextFromHeaders(message.headers), {
          'rpc.system': 'nats',
          'rpc.method': subject,
        });
        const handled = inSpan(span, async () => {
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
              reply = await this.identity.seal(data, signed, subject);
            } else {
              const data = await handler(message.json<RpcRequestOf<S>>(), null).then(
                (result): RpcReply<RpcResponseOf<S>> => ({ ok: true, data: result }),
                (failure: unknown) => this.errorReply(subject, failure, span),
              );
              reply = await this.signedInClear(data, message, subject);
            }
          } catch (failure) {
            // Refused callers get the reason in clear: there is nothing to protect in it.
            // Signed for that request, so the caller believes it at once (`RpcIdentity.signRefusal`).
            const refusal = this.errorReply(subject, failure, span);
            reply = allowedCallers
              ? await this.identity.signRefusal(subject, message.data, refusal, failure)
              : refusal;
          }
          message.respond(JSON.stringify(reply));
        });
        this.handling.add(handled);
        const settled = () => this.handling.delete(handled);
        handled.then(settled, (failure: unknown) => {
          settled();
          this.logger.error(`${subject}: no answer sent: ${String(failure)}`);
        });
      },
    });
    this.subscriptions.push(subscription);
  }

  /**
   * Calls a subject; a domain error of the other side is re-thrown here as the same ApiError. A
   * repeatable subject (RPC_REPEATABLE) is asked again while no answer comes (`askRepeatedly`): the
   * queue group hands each try to a replica at random, so a paused replica costs a try, not the call.
   */
  async call<S extends RpcSubject>(
    subject: S,
    request: RpcRequestOf<S>,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): Promise<RpcResponseOf<S>> {
    const answer = RPC_REPEATABLE.has(subject)
      ? await this.askRepeatedly(subject, request, timeoutMs)
      : await this.ask(subject, await this.signed(subject, request), timeoutMs).catch((error: unknown) => {
          throw this.failed(subject, error);
        });
    const stats = this.statsOf(subject);
    stats.answered++;
    addRepeatTokens(stats, REPEAT_TOKENS_PER_ANSWER);
    if (answer.ok) return answer.data;
    const { code, message, errors, retryAfter, transient } = answer.error;
    // The callee refused this service itself (its key not trusted there, clocks apart): never the
    // end caller's refusal, so a 500, which an idempotency-key does not keep, not their 401/403.
    if (code === 'BYRD401' || code === 'BYRD403') {
      this.logger.error(`${subject} refused this service: ${message}`);
      throw new ApiError(ErrorKind.Internal, `${subject} could not be called`, {
        cause: new Error(`${subject} refused this service: ${message}`),
      });
    }
    throw new ApiError(kindOfCode(code), message, { code, errors, retryAfter, transient });
  }

  /**
   * Asks, and asks again each time no answer has come for a while, keeping every try open until the
   * call's deadline: the first answer of any try is the call's, so a replica that is only slow still
   * answers it, and one that is paused holds one try, not the call. The waits start at a few times
   * the subject's usual answer time and double, up to MAX_TRIES tries, each with at least
   * MIN_REPEAT_AFTER_MS left; one try only while the subject's calls keep going unanswered
   * (MAX_REPEAT_TOKENS). Fails when the last try open runs out of time with no try left to send,
   * or at once when nobody serves the subject and no try a replica took is still open.
   */
  private askRepeatedly<S extends RpcSubject>(
    subject: S,
    request: RpcRequestOf<S>,
    timeoutMs: number,
  ): Promise<Answer<S>> {
    const deadline = performance.now() + timeoutMs;
    const stats = this.statsOf(subject);
    const maxTries = stats.repeatTokens > MAX_REPEAT_TOKENS / 2 ? MAX_TRIES : 1;
    return new Promise<Answer<S>>((resolve, reject) => {
      let done = false;
      let tries = 0;
      let open = 0;
      let nextTry: NodeJS.Timeout | undefined;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(nextTry);
        settle();
      };
      const send = async (repeatAfterMs: number): Promise<void> => {
        tries++;
        open++;
        if (tries < maxTries && performance.now() + repeatAfterMs + MIN_REPEAT_AFTER_MS < deadline) {
          nextTry = setTimeout(() => {
            nextTry = undefined;
            void send(repeatAfterMs * 2);
          }, repeatAfterMs);
        }
        let body: Sent;
        try {
          // Signed anew for each try: a served side accepts a signed request once.
          body = await this.signed(subject, request);
        } catch (error) {
          return finish(() => reject(error instanceof Error ? error : new Error(String(error))));
        }
        if (done) return; // answered while this try was being signed
        if (tries > 1) stats.repeats++;
        const sentAt = performance.now();
        try {
          const answer = await this.ask(subject, body, Math.max(1, deadline - sentAt));
          // Only the answer that wins is timed: late ones (a paused replica waking up) say nothing
          // about how fast the subject answers now.
          if (!done) noteAnswerTime(stats, performance.now() - sentAt);
          finish(() => resolve(answer));
        } catch (error) {
          open--;
          // A try that timed out leaves the call to the others, open or to come; any other failure
          // (nobody serves the subject) ends it, unless a try taken by a replica is still open.
          // So does one that got only replies its server did not sign by its timeout (`ask`).
          const othersMayAnswer =
            open > 0 ||
            ((error instanceof TimeoutError || error instanceof UnauthenticatedReply) &&
              nextTry !== undefined);
          if (!othersMayAnswer) finish(() => reject(this.failed(subject, error)));
        }
      };
      void send(Math.max(MIN_REPEAT_AFTER_MS, REPEAT_AFTER_USUAL_TIMES * (stats.usualAnswerMs ?? 0)));
    });
  }

  /**
   * The request as sent: signed by this service when the subject is authenticated, and sealed to
   * the serving service when it carries a card; otherwise named by a fresh id, which the serving
   * service's signed reply must name.
   */
  private async signed<S extends RpcSubject>(subject: S, request: RpcRequestOf<S>): Promise<Sent> {
    if (RPC_CALLERS[subject] === undefined) {
      const named = RPC_SERVED_BY[subject] !== undefined;
      return named ? { body: request, requestId: randomUUID(), inClear: true } : { body: request };
    }
    const signed = await this.identity.sign(subject, request);
    const server = RPC_SEALED_REQUESTS[subject];
    return {
      body: server === undefined ? signed : await this.identity.sealFor(server, signed),
      requestId: rpcRequestIdOf(signed),
    };
  }

  private statsOf(subject: RpcSubject): RpcSubjectStats {
    let stats = this.statsBySubject.get(subject);
    if (!stats) {
      stats = {
        answered: 0,
        unanswered: 0,
        repeats: 0,
        usualAnswerMs: null,
        repeatTokens: MAX_REPEAT_TOKENS,
      };
      this.statsBySubject.set(subject, stats);
    }
    return stats;
  }

  /** A call that got no answer, or only answers its server did not sign. */
  private failed(subject: RpcSubject, error: unknown): ApiError {
    if (!(error instanceof UnauthenticatedReply)) return this.unanswered(subject, error);
    // Another client of the broker answered first (or the server has no RPC_SIGNING_KEY, or its key
    // is not in this service's RPC_TRUSTED_CALLERS): nothing in the reply is believed.
    this.logger.error(`${subject}: reply refused: ${error.message}`);
    return new ApiError(ErrorKind.Internal, `${subject} could not be called`, { cause: error });
  }

  /**
   * A call that got no answer (timed out, or nobody serves the subject): 503 with Retry-After to the
   * caller, who may retry (with the same idempotency-key); NATS's own words go to the logs only.
   */
  private unanswered(subject: RpcSubject, error: unknown): ApiError {
    const stats = this.statsOf(subject);
    stats.unanswered++;
    addRepeatTokens(stats, -1);
    const reason = error instanceof Error ? error.message : String(error);
    return new ApiError(ErrorKind.Unavailable, `${subject} did not answer in time; retry the request`, {
      retryAfter: 1,
      cause: new Error(`${subject}: ${reason}`),
    });
  }

  /**
   * One request (as sent: signed or plain) and its reply. On a subject with a serving service
   * (RPC_SERVED_BY) every reply of the try is weighed until one is that service's (`judge`): NATS
   * hands the request to every plain subscriber of the subject too, so the first reply may be
   * another client's, and refusing the call for it would let any client of the broker fail every
   * call. When none is by the try's timeout, an unsigned refusal in clear is taken (a server of the
   * release before signed refusals), else the call is refused for the replies it got
   * (`UnauthenticatedReply`), or timed out.
   */
  private async ask<S extends RpcSubject>(subject: S, sent: Sent, timeoutMs: number): Promise<Answer<S>> {
    const data = JSON.stringify(sent.body);
    // The caller's trace context: the served side's span joins its trace.
    let carrier = natsTraceHeaders();
    if (sent.inClear) {
      carrier ??= headers();
      carrier.set(RPC_REQUEST_ID_HEADER, sent.requestId!);
      carrier.set(RPC_CALLER_HEADER, this.serviceName);
    }
    const replies = await this.nats.nc.requestMany(this.nats.subject(subject), data, {
      maxWait: timeoutMs,
      strategy: 'timer',
      headers: carrier,
    });
    let refused: UnauthenticatedReply | undefined;
    let unsignedRefusal: Answer<S> | undefined;
    for await (const message of replies) {
      if (sent.requestId === undefined) return message.json<Answer<S>>();
      const judged = await this.judge<S>(subject, message.string(), sent.requestId, data);
      // Leaving the loop ends the request: later replies are dropped.
      if ('answer' in judged) return judged.answer;
      refused = judged.refused;
      unsignedRefusal ??= judged.unsignedRefusal;
    }
    if (unsignedRefusal) return unsignedRefusal;
    throw refused ?? new TimeoutError();
  }

  /**
   * A reply, believed only when the serving service signed it for this request: sealed to this
   * service (an authenticated subject's answer), or in clear naming the request's exact bytes (a
   * refusal, or any reply of a subject whose requests are not signed).
   */
  private async judge<S extends RpcSubject>(
    subject: S,
    text: string,
    requestId: string,
    data: string,
  ): Promise<Judged<S>> {
    const expected = { subject, server: RPC_SERVED_BY[subject]!, requestId };
    let reply: SealedRpcReply | SignedRpcReply<RpcResponseOf<S>> | null;
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch {
      reply = null;
    }
    if (reply === null || typeof reply !== 'object') {
      return { refused: new UnauthenticatedReply(`${subject}: a reply that is not JSON`) };
    }
    const believed =
      'jwe' in reply
        ? this.identity.open<RpcResponseOf<S>>(reply, expected)
        : typeof reply.jws === 'string'
          ? this.identity.openInClear(reply, { ...expected, requestHash: rpcRequestHashOf(data) })
          : undefined;
    if (believed) {
      return believed.then(
        (answer) => ({ answer }),
        (error: Error) => ({ refused: new UnauthenticatedReply(error.message) }),
      );
    }
    const unsigned = reply as Answer<S>;
    if (unsigned.ok !== false) {
      return {
        refused: new UnauthenticatedReply(`${subject}: an answer in clear, not signed by ${expected.server}`),
      };
    }
    // A refusal can only deny: unsigned, it is kept in case nothing signed comes.
    const refused = new UnauthenticatedReply(`${subject}: a refusal not signed by ${expected.server}`);
    return { refused, unsignedRefusal: unsigned };
  }

  /**
   * The reply to an unsigned request, signed for it when its caller named it (the release before
   * did not: it gets the reply as it is, and reads only the clear fields anyway).
   */
  private async signedInClear<T>(reply: RpcReply<T>, message: Msg, subject: string): Promise<RpcReply<T>> {
    const requestId = message.headers?.get(RPC_REQUEST_ID_HEADER);
    const caller = message.headers?.get(RPC_CALLER_HEADER);
    if (!requestId || !caller) return reply;
    return this.identity.signInClear(reply, { caller, requestId, data: message.data }, subject);
  }

  private errorReply(subject: string, failure: unknown, span: Span): RpcReply<never> {
    const apiError = toApiError(failure);
    if (apiError.kind === ErrorKind.Internal) this.logger.error(`${subject} failed: ${String(failure)}`);
    span.setStatus({ code: SpanStatusCode.ERROR, message: apiError.code });
    return rpcError(apiError.code, apiError.message, apiError.errors, apiError);
  }

  /**
   * Takes no more requests, then waits for those being handled to answer: the broker connection and
   * the database pool close only after this (a request whose work committed must not lose its
   * answer to a rolling deploy; not every subject may be asked again).
   */
  beforeApplicationShutdown(): Promise<void> {
    // Once: the service's shutdown drains it before the outbox's last pass, then Nest calls it again.
    this.stopping ??= (async () => {
      await Promise.all(this.subscriptions.map((s) => s.drain()));
      await Promise.allSettled([...this.handling]);
    })();
    return this.stopping;
  }
}

/** What an Rpc keeps of a subject it calls. */
export interface RpcSubjectStats {
  /** Calls answered (a result or a domain error), calls that got no answer, and tries repeated. */
  answered: number;
  unanswered: number;
  repeats: number;
  /** How long its winning tries usually took, in ms (an exponential moving average); null at first. */
  usualAnswerMs: number | null;
  /** Its retry-throttling tokens (MAX_REPEAT_TOKENS at first). */
  repeatTokens: number;
}

function addRepeatTokens(stats: RpcSubjectStats, tokens: number): void {
  stats.repeatTokens = Math.min(MAX_REPEAT_TOKENS, Math.max(0, stats.repeatTokens + tokens));
}

function noteAnswerTime(stats: RpcSubjectStats, ms: number): void {
  const usual = stats.usualAnswerMs;
  stats.usualAnswerMs = usual === null ? ms : usual + USUAL_WEIGHT * (ms - usual);
}
