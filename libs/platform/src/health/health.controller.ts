import { Controller, Get, HttpCode, Inject, Optional, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '../auth/api-key.guard.js';
import type { NatsContext } from '../messaging/nats.js';
import { NATS_CONTEXT } from '../messaging/tokens.js';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not answer`)), CHECK_TIMEOUT_MS).unref(),
    ),
  ]);
}

/** GET /health/ready: each dependency's state (database only for a service that has one). */
export interface ReadinessBody {
  status: 'ok' | 'unavailable';
  database?: 'up' | 'down';
  nats: 'up' | 'down';
}

/**
 * Liveness says the process runs; readiness says it can serve: PostgreSQL (for a service with a
 * database) and NATS both answer.
 */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    @Optional() @Inject(DataSource) private readonly dataSource: DataSource | null,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HttpCode(200)
  async ready(): Promise<ReadinessBody> {
    const checks = await Promise.allSettled([
      this.dataSource ? withTimeout(this.dataSource.query('SELECT 1'), 'PostgreSQL') : null,
      withTimeout(this.nats.nc.rtt(), 'NATS'),
    ]);
    const [database, nats] = checks.map((c) => (c.status === 'fulfilled' ? 'up' : 'down'));
    const body: ReadinessBody = {
      status: database === 'up' && nats === 'up' ? 'ok' : 'unavailable',
      ...(this.dataSource ? { database } : {}),
      nats,
    };
    if (body.status !== 'ok') throw new ServiceUnavailableException(body);
    return body;
  }
}
