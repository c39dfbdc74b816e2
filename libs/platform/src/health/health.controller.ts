import { Controller, Get, Inject, Logger, Optional, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../auth/api-key.guard.js';
import type { NatsContext } from '../messaging/nats.js';
import { NATS_CONTEXT, PLATFORM_CONFIG } from '../messaging/tokens.js';
import type { StatelessConfig } from '../config/config.js';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not answer`)), CHECK_TIMEOUT_MS).unref(),
    ),
  ]);
}

/**
 * GET /health/ready: each dependency's state (database only for a service that has one).
 * `degraded`: NATS has been away for less than READINESS_NATS_GRACE_MS; the service still serves.
 */
export interface ReadinessBody {
  status: 'ok' | 'degraded' | 'unavailable';
  database?: 'up' | 'down';
  nats: 'up' | 'down';
}

/**
 * Liveness says the process runs; readiness says it can serve: PostgreSQL (for a service with a
 * database) answers, and NATS answers or has been away for less than READINESS_NATS_GRACE_MS.
 *
 * Why a grace for NATS: every replica shares the broker, so its restart would take them all out of
 * the Service at once, and every request, which the outbox lets go on without it, would meet the
 * Ingress's bare 503 instead. Past the grace the replica leaves: a broker that long away (or a
 * replica cut off from it alone) also means keys revoked meanwhile are not seen by its cache.
 */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Readiness');
  /** When a readiness check first found NATS not answering, since it last did. */
  private natsAwaySince: number | null = null;
  private lastStatus: ReadinessBody['status'] = 'ok';

  constructor(
    @Optional() @Inject(DataSource) private readonly dataSource: DataSource | null,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(PLATFORM_CONFIG) private readonly config: StatelessConfig,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** 503 with the same body when unavailable: a probe's answer, not an API error (none is logged). */
  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessBody> {
    const checks = await Promise.allSettled([
      this.dataSource ? withTimeout(this.dataSource.query('SELECT 1'), 'PostgreSQL') : null,
      withTimeout(this.nats.nc.rtt(), 'NATS'),
    ]);
    const [database, nats] = checks.map((c) => (c.status === 'fulfilled' ? 'up' : 'down'));
    const now = Date.now();
    this.natsAwaySince = nats === 'up' ? null : (this.natsAwaySince ?? now);
    const natsGone =
      this.natsAwaySince !== null && now - this.natsAwaySince >= this.config.READINESS_NATS_GRACE_MS;
    const body: ReadinessBody = {
      status: database === 'down' || natsGone ? 'unavailable' : nats === 'down' ? 'degraded' : 'ok',
      ...(this.dataSource ? { database } : {}),
      nats,
    };
    if (body.status !== this.lastStatus) {
      this.logger.warn(`Readiness ${this.lastStatus} -> ${body.status} (${JSON.stringify(body)})`);
      this.lastStatus = body.status;
    }
    void reply.status(body.status === 'unavailable' ? 503 : 200);
    return body;
  }
}
