import { Controller, Get, Inject, Logger, Optional, Res, type OnModuleDestroy } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
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
 * `degraded`: NATS has been away for less than READINESS_NATS_GRACE_MS, or the database answers but
 * every pool connection is busy with requests waiting for one (`database: 'busy'`); the service
 * still serves.
 */
export interface ReadinessBody {
  status: 'ok' | 'degraded' | 'unavailable';
  database?: 'up' | 'busy' | 'down';
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
 *
 * Why PostgreSQL is asked on a connection of its own, outside the service's pool: a `SELECT 1`
 * queued behind a backlog of requests in the pool would time out on every replica at once during a
 * load or latency spike, and the Ingress would answer 503 to everything; a saturated pool whose
 * server answers is `degraded`, not unavailable. A server that does not answer is still `down`.
 */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController implements OnModuleDestroy {
  private readonly logger = new Logger('Readiness');
  /** When a readiness check first found NATS not answering, since it last did. */
  private natsAwaySince: number | null = null;
  private lastStatus: ReadinessBody['status'] = 'ok';
  /** The readiness check's own connection (opened on first use, again after it fails). */
  private probe: Promise<pg.Client> | undefined;

  constructor(
    @Optional() @Inject(DataSource) private readonly dataSource: DataSource | null,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(PLATFORM_CONFIG) private readonly config: StatelessConfig,
  ) {}

  async onModuleDestroy(): Promise<void> {
    const probe = this.probe;
    this.probe = undefined;
    // Bounded: ending a connection to a server that went silent waits for ever.
    await withTimeout(probe?.then((client) => client.end()) ?? Promise.resolve(), 'PostgreSQL').catch(
      () => undefined,
    );
  }

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** 503 with the same body when unavailable: a probe's answer, not an API error (none is logged). */
  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessBody> {
    const checks = await Promise.allSettled([
      this.dataSource ? this.databaseAnswers() : null,
      withTimeout(this.nats.nc.rtt(), 'NATS'),
    ]);
    const [databaseUp, nats] = checks.map((c) => (c.status === 'fulfilled' ? 'up' : 'down'));
    // A service without a database (the hosted form's BFF) has no pool to look at.
    const database = this.dataSource && databaseUp === 'up' && this.poolSaturated() ? 'busy' : databaseUp;
    const now = Date.now();
    this.natsAwaySince = nats === 'up' ? null : (this.natsAwaySince ?? now);
    const natsGone =
      this.natsAwaySince !== null && now - this.natsAwaySince >= this.config.READINESS_NATS_GRACE_MS;
    const body: ReadinessBody = {
      status:
        database === 'down' || natsGone
          ? 'unavailable'
          : nats === 'down' || database === 'busy'
            ? 'degraded'
            : 'ok',
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

  private pool(): pg.Pool {
    return (this.dataSource!.driver as PostgresDriver).master as pg.Pool;
  }

  /** Every pool connection in use and requests waiting for one. */
  private poolSaturated(): boolean {
    return this.pool().waitingCount > 0;
  }

  /** `SELECT 1` on the probe's own connection, within CHECK_TIMEOUT_MS; a failed one is dropped. */
  private async databaseAnswers(): Promise<void> {
    this.probe ??= this.openProbe();
    const probe = this.probe;
    try {
      await withTimeout(
        probe.then((client) => client.query('SELECT 1')),
        'PostgreSQL',
      );
    } catch (error) {
      if (this.probe === probe) this.probe = undefined;
      void probe.then((client) => client.end()).catch(() => undefined);
      throw error;
    }
  }

  private openProbe(): Promise<pg.Client> {
    const pool = this.pool();
    // The pool's own client class and settings (TLS, statement timeout, keepalive).
    const { Client } = pool as unknown as { Client: typeof pg.Client };
    const client = new Client({ ...pool.options, application_name: 'byrd-readiness' });
    const opened = client.connect().then(() => client);
    // A connection lost while idle: the next check opens another.
    client.on('end', () => {
      if (this.probe === opened) this.probe = undefined;
    });
    return opened;
  }
}
