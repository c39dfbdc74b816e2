import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
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

/** Liveness says the process runs; readiness says it can serve: PostgreSQL and NATS both answer. */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @HttpCode(200)
  async ready() {
    const checks = await Promise.allSettled([
      withTimeout(this.dataSource.query('SELECT 1'), 'PostgreSQL'),
      withTimeout(this.nats.nc.rtt(), 'NATS'),
    ]);
    const [database, nats] = checks.map((c) => (c.status === 'fulfilled' ? 'up' : 'down'));
    const body = { status: database === 'up' && nats === 'up' ? 'ok' : 'unavailable', database, nats };
    if (body.status !== 'ok') throw new ServiceUnavailableException(body);
    return body;
  }
}
