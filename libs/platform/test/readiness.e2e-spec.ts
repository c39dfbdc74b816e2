import { DataSource } from 'typeorm';
import {
  baseConfigSchema,
  dataSourceOptions,
  HealthController,
  loadConfig,
  type NatsContext,
  type StatelessConfig,
} from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';
import { SilentableRelay } from './tcp-relay.js';

const POOL_SIZE = 4;

/**
 * GET /health/ready's database check, as the chart's probe sees it: a pool busy with slow requests
 * is not a database gone (every replica would leave the Service at once), a server that does not
 * answer is.
 */
describe('readiness and the database', () => {
  let env: TestEnvironment;
  let relay: SilentableRelay;
  let dataSource: DataSource;
  let health: HealthController;

  const ready = async () => {
    let status = 200;
    const reply = { status: (code: number) => ((status = code), reply) };
    const body = await health.ready(reply as never);
    return { status, body };
  };

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const config = loadConfig(baseConfigSchema, await env.serviceEnv('platform'));
    relay = await SilentableRelay.start(new URL(config.DATABASE_URL));
    dataSource = await new DataSource(
      dataSourceOptions({
        url: relay.url(config.DATABASE_URL),
        poolSize: POOL_SIZE,
        entities: [],
        migrations: [],
      }),
    ).initialize();
    const nats = { nc: { rtt: () => Promise.resolve(1) } } as unknown as NatsContext;
    health = new HealthController(dataSource, nats, { READINESS_NATS_GRACE_MS: 30_000 } as StatelessConfig);
  });
  afterAll(async () => {
    relay.silent = false;
    await health?.onModuleDestroy();
    await dataSource?.destroy();
    await relay?.close();
    await env?.cleanup();
  });

  it('stays ready (degraded) while every pool connection is busy and requests wait for one', async () => {
    expect(await ready()).toEqual({ status: 200, body: { status: 'ok', database: 'up', nats: 'up' } });
    // Every connection runs a slow statement (past the check's 2 s) and more requests queue behind.
    const slow = Array.from({ length: POOL_SIZE + 2 }, () =>
      dataSource.query('SELECT pg_sleep(3)').catch(() => undefined),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await ready()).toEqual({
      status: 200,
      body: { status: 'degraded', database: 'busy', nats: 'up' },
    });
    await Promise.all(slow);
    expect(await ready()).toEqual({ status: 200, body: { status: 'ok', database: 'up', nats: 'up' } });
  }, 20_000);

  it('is unavailable while PostgreSQL does not answer, and ready again once it does', async () => {
    relay.silent = true;
    expect(await ready()).toEqual({
      status: 503,
      body: { status: 'unavailable', database: 'down', nats: 'up' },
    });
    relay.silent = false;
    expect(await ready()).toEqual({ status: 200, body: { status: 'ok', database: 'up', nats: 'up' } });
  }, 20_000);
});
