import pg from 'pg';
import { callService, type EventCollector, type ServiceProcess } from '@byrd/platform/testing';
import { OrdersProcessWorld } from './process-world.js';

/**
 * PostgreSQL dropping the service's connections (a restart, a failover, an operator's
 * pg_terminate_backend) while requests and the outbox relay use them: the process must ride it out,
 * and every order it answered 201 for is announced.
 */
describe('orders while PostgreSQL drops its connections', () => {
  let world: OrdersProcessWorld;
  let vars: Record<string, string>;
  let events: EventCollector;
  let service: ServiceProcess;

  beforeAll(async () => {
    world = await OrdersProcessWorld.create({ LOG_LEVEL: 'fatal', OUTBOX_POLL_MS: '10' });
    vars = world.vars;
    events = await world.env.collect('order.created');
    service = await world.start();
  });
  afterAll(() => world?.stop());

  it('keeps running through repeated terminations of every connection, then serves and announces again', async () => {
    const database = new URL(vars.DATABASE_URL).pathname.slice(1);
    const admin = new pg.Client({ connectionString: vars.DATABASE_URL.replace(`/${database}`, '/postgres') });
    await admin.connect();
    const created: string[] = [];
    let loading = true;
    const load = async () => {
      while (loading) {
        const answer = await callService(service.url, world.merchant.apiKey, 'POST', '/api/v2/orders', {
          amount: '10.00',
          currency: 'EUR',
        }).catch(() => null);
        if (answer?.status === 201) created.push(answer.body.orderId as string);
      }
    };
    const clients = [load(), load(), load(), load()];
    try {
      for (let round = 0; round < 60; round++) {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [database],
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      loading = false;
      await Promise.all(clients);
      await admin.end();
    }

    const { exitCode, signalCode } = service.child;
    if (exitCode !== null || signalCode !== null)
      throw new Error(`orders exited (${exitCode ?? signalCode}):\n${service.output().slice(-6000)}`);
    const after = await callService(service.url, world.merchant.apiKey, 'POST', '/api/v2/orders', {
      amount: '10.00',
      currency: 'EUR',
    });
    expect(after.status).toBe(201);
    created.push(after.body.orderId as string);
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
    // Nothing answered 201 is lost: each order is announced (once the relay gets a connection again).
    for (const orderId of created) {
      await events.waitFor((e) => (e.data as { orderId?: string }).orderId === orderId, 20_000);
    }
  }, 60_000);
});
