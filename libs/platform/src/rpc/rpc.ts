import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import type { RpcContracts, RpcReply, RpcRequestOf, RpcSubject } from '@byrd/contracts';
import { ApiError, ErrorKind, kindOfCode } from '../errors/api-error.js';
import { toApiError } from '../errors/error-body.js';
import type { NatsContext } from '../messaging/nats.js';
import { NATS_CONTEXT, SERVICE_NAME } from '../messaging/tokens.js';

type RpcResponseOf<S extends RpcSubject> = RpcContracts[S]['response'];

const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Request/reply between services on `rpc.<service>.<verb>` subjects (never a stream's subjects).
 * Handlers answer with a tagged reply, so domain errors cross the wire with their code.
 */
@Injectable()
export class Rpc implements BeforeApplicationShutdown {
  private readonly logger = new Logger(Rpc.name);
  private readonly subscriptions: Subscription[] = [];

  constructor(
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(SERVICE_NAME) private readonly serviceName: string,
  ) {}

  /** Serves a subject; replicas share the load through a queue group named after the service. */
  serve<S extends RpcSubject>(
    subject: S,
    handler: (request: RpcRequestOf<S>) => Promise<RpcResponseOf<S>>,
  ): void {
    const subscription = this.nats.nc.subscribe(this.nats.subject(subject), {
      queue: this.serviceName,
      callback: (error, message) => {
        if (error) return this.logger.error(`${subject}: ${error.message}`);
        void (async () => {
          let reply: RpcReply<RpcResponseOf<S>>;
          try {
            reply = { ok: true, data: await handler(message.json<RpcRequestOf<S>>()) };
          } catch (failure) {
            const apiError = toApiError(failure);
            if (apiError.kind === ErrorKind.Internal)
              this.logger.error(`${subject} failed: ${String(failure)}`);
            reply = { ok: false, error: { code: apiError.code, message: apiError.message } };
          }
          message.respond(JSON.stringify(reply));
        })();
      },
    });
    this.subscriptions.push(subscription);
  }

  /** Calls a subject; a domain error of the other side is re-thrown here as the same ApiError. */
  async call<S extends RpcSubject>(
    subject: S,
    request: RpcRequestOf<S>,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): Promise<RpcResponseOf<S>> {
    let answer: RpcReply<RpcResponseOf<S>>;
    try {
      const message = await this.nats.nc.request(this.nats.subject(subject), JSON.stringify(request), {
        timeout: timeoutMs,
      });
      answer = message.json<RpcReply<RpcResponseOf<S>>>();
    } catch (error) {
      throw new ApiError(ErrorKind.Unavailable, `${subject} did not answer: ${(error as Error).message}`);
    }
    if (answer.ok) return answer.data;
    throw new ApiError(kindOfCode(answer.error.code), answer.error.message, { code: answer.error.code });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.drain()));
  }
}
