import pg from 'pg';
import { callService } from '@byrd/platform/testing';
import { OrdersProcessWorld } from './process-world.js';

const LEASE_MS = 1_500;

/** An idempotency key whose request died with its process is the merchant's again within the lease. */
describe('orders killed while a request holds its idempotency key', () => {
  let world: OrdersProcessWorld;

  beforeAll(async () => {
    world = await OrdersProcessWorld.create({ LOG_LEVEL: 'fatal', IDEMPOTENCY_LEASE_MS: String(LEASE_MS) });
  });
  afterAll(() => world?.stop());

  it('answers the retry once the dead request’s lease has run out, and only once', async () => {
    const key = `crash-${Date.now()}`;
    const order = { amount: '12.00', currency: 'EUR', orderRef: 'crash-1' };
    const create = () =>
      callService(world.service!.url, world.merchant.apiKey, 'POST', '/api/v2/orders', order, {
        'idempotency-key': key,
      });
    const db = new pg.Client({ connectionString: world.vars.DATABASE_URL });
    await db.connect();
    try {
      const service = await world.start();
      // The order's insert waits on this lock, so the request is in flight, holding its key.
      await db.query('BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      void create().catch(() => undefined);
      for (let i = 0; ; i++) {
        const held = new pg.Client({ connectionString: world.vars.DATABASE_URL });
        await held.connect();
        const { rowCount } = await held.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
        await held.end();
        if (rowCount === 1) break;
        if (i > 100) throw new Error('the request never claimed its key');
        await new Promise((r) => setTimeout(r, 20));
      }
      service.child.kill('SIGKILL');
      await service.exited();
      await db.query('ROLLBACK');

      await world.start();
      const started = Date.now();
      let answer = await create();
      while (answer.status === 409 && Date.now() - started < LEASE_MS + 5_000) {
        expect(answer.body.code).toBe('BYRD409');
        await new Promise((r) => setTimeout(r, 200));
        answer = await create();
      }
      expect(answer.status).toBe(201);
      // The key now holds that answer: a repeat replays it, and there is one order.
      const replay = await create();
      expect(replay.status).toBe(201);
      expect(replay.body.orderId).toBe(answer.body.orderId);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM orders WHERE order_ref = 'crash-1'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('answers the retry with the order the dead request committed before its answer was stored', async () => {
    const key = `crash-after-commit-${Date.now()}`;
    const order = { amount: '13.00', currency: 'EUR', orderRef: 'crash-2' };
    const create = (body: Record<string, unknown> = order) =>
      callService(world.service!.url, world.merchant.apiKey, 'POST', '/api/v2/orders', body, {
        'idempotency-key': key,
      });
    const orders = new pg.Client({ connectionString: world.vars.DATABASE_URL });
    const keys = new pg.Client({ connectionString: world.vars.DATABASE_URL });
    await orders.connect();
    await keys.connect();
    const count = async () =>
      (await orders.query(`SELECT count(*)::int AS n FROM orders WHERE order_ref = 'crash-2'`)).rows[0].n;
    try {
      world.service?.child.kill('SIGKILL'); // the first test's
      const service = await world.start();
      // Held at the order's insert until its key is claimed; then the key's table is locked, so the
      // order commits but its answer can never be stored: the process dies in between.
      await orders.query('BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      void create().catch(() => undefined);
      for (let i = 0; ; i++) {
        const { rowCount } = await keys.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
        if (rowCount === 1) break;
        if (i > 100) throw new Error('the request never claimed its key');
        await new Promise((r) => setTimeout(r, 20));
      }
      await keys.query('BEGIN; LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE');
      await orders.query('ROLLBACK');
      for (let i = 0; (await count()) === 0; i++) {
        if (i > 100) throw new Error('the order was never committed');
        await new Promise((r) => setTimeout(r, 20));
      }
      service.child.kill('SIGKILL');
      await service.exited();
      // Its statement waiting on the lock would still run once the lock goes (PostgreSQL notices a
      // gone client only when it answers): it dies with its process, as it would had it not been sent.
      await orders.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1`,
        [(await keys.query('SELECT pg_backend_pid() AS pid')).rows[0].pid],
      );
      await keys.query('ROLLBACK');
      const [committed] = (await orders.query(`SELECT id FROM orders WHERE order_ref = 'crash-2'`)).rows;

      await world.start();
      // Once the dead request's lease has run out, another body under its key is refused, as under
      // any key: it must not take the key over (and be answered with the order committed for it).
      await new Promise((r) => setTimeout(r, LEASE_MS + 200));
      const otherBody = await create({ ...order, amount: '15.00' });
      expect(otherBody.status).toBe(422);
      expect(otherBody.body.message).toMatch(/idempotency-key was already used/);
      const started = Date.now();
      let answer = await create();
      while (answer.status === 409 && Date.now() - started < LEASE_MS + 5_000) {
        await new Promise((r) => setTimeout(r, 200));
        answer = await create();
      }
      expect(answer.status).toBe(201);
      expect(answer.body.orderId).toBe(committed.id);
      expect(await count()).toBe(1);
      // The key now holds that answer; another order under it is refused.
      expect((await create()).headers.get('idempotent-replayed')).toBe('true');
      expect((await create({ ...order, amount: '14.00' })).status).toBe(422);
    } finally {
      await orders.end();
      await keys.end();
    }
  }, 60_000);
});
