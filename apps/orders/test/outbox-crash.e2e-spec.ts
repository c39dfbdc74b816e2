import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runMigrations } from '@byrd/platform';
import {
  freePort,
  startServiceProcess,
  TestEnvironment,
  type EventCollector,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '../src/database.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

/** DESIGN.md: "A crash between commit and publish loses nothing." */
describe('orders process killed between commit and publish', () => {
  let env: TestEnvironment;
  let vars: Record<string, string>;
  let merchant: TestMerchant;
  let events: EventCollector;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run "npx turbo run build --filter=@byrd/orders" first`);
    env = await TestEnvironment.create();
    vars = await env.serviceEnv('orders', { HTTP_PORT: String(await freePort()), LOG_LEVEL: 'warn' });
    await runMigrations({ url: vars.DATABASE_URL, entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS });
    merchant = await env.createMerchant();
    events = await env.collect('order.>');
  });
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  // Two service processes started one after the other: each may take 20 s or more on a loaded CI
  // machine (startServiceProcess waits up to 45 s), so together past the 60 s default.
  it('publishes order.created exactly once after a restart', async () => {
    // The relay is held off, so the process dies with the event committed but never published.
    service = await startServiceProcess(MAIN, { ...vars, OUTBOX_RELAY_ENABLED: 'false' });
    const response = await fetch(`http://127.0.0.1:${vars.HTTP_PORT}/api/v2/orders`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '9.99', currency: 'EUR', orderRef: 'crash-1' }),
    });
    expect(response.status).toBe(201);
    const { orderId } = (await response.json()) as { orderId: string };
    service.child.kill('SIGKILL');
    await service.exited();

    await new Promise((r) => setTimeout(r, 300));
    expect(events.ofType('order.created')).toHaveLength(0);
    const db = new pg.Client({ connectionString: vars.DATABASE_URL });
    await db.connect();
    const pending = await db.query(`SELECT count(*)::int AS n FROM outbox`);
    await db.end();
    expect(pending.rows[0].n).toBe(1);

    service = await startServiceProcess(MAIN, vars);
    const published = await events.waitFor(
      (e) => e.type === 'order.created' && (e.data as { orderId: string }).orderId === orderId,
    );
    expect(published.envelope.data).toMatchObject({ orderId, orderRef: 'crash-1', status: 'created' });
    await new Promise((r) => setTimeout(r, 300));
    expect(events.ofType('order.created')).toHaveLength(1);

    service.child.kill('SIGTERM');
    expect(await service.exited()).toBe(0);
  }, 120_000);
});
