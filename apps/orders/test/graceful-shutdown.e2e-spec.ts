import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Rpc, runMigrations } from '@byrd/platform';
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

/** The stream of order creations: TOTAL requests spread over SPREAD_MS, at most IN_FLIGHT at once. */
const TOTAL = 300;
const IN_FLIGHT = 20;
const SPREAD_MS = 2_000;
/** SIGTERM goes out right after this many requests have been sent. */
const SIGTERM_AFTER = 150;
/**
 * A request sent this long before SIGTERM has surely reached the service (it is in flight or done).
 * Not much less: on a busy 2-core machine a request written to a kept-alive socket 40 ms before
 * SIGTERM was still unread when the closing server shut that "idle" socket (ECONNRESET, no order: a
 * request never taken, which the client retries). Sent requests are 6.7 ms apart.
 */
const REACHED_MS = 100;
/** Connection-level failures of a request the server never took (listener closed, idle keep-alive socket closed). */
const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

interface Outcome {
  orderRef: string;
  sentAt: number;
  status?: number;
  body?: string;
  orderId?: string;
  error?: string;
}

function errorCode(error: unknown): string {
  const e = error as { cause?: { code?: string; message?: string }; code?: string; message?: string };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(error);
}

/**
 * Fires the stream; `onSent(n)` runs after the n-th request has been sent (fetch called).
 * Resolves with every request's outcome once all have settled.
 */
async function fireStream(url: string, apiKey: string, onSent: (sent: number) => void): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const pending = new Set<Promise<void>>();
  const started = Date.now();
  for (let i = 0; i < TOTAL; i++) {
    const due = started + (i * SPREAD_MS) / TOTAL;
    if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
    while (pending.size >= IN_FLIGHT) await Promise.race(pending);
    const outcome: Outcome = { orderRef: `drain-${i}`, sentAt: performance.now() };
    outcomes.push(outcome);
    const request = fetch(url, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '12.50', currency: 'EUR', orderRef: outcome.orderRef }),
    })
      .then(async (response) => {
        outcome.status = response.status;
        outcome.body = await response.text();
        if (response.status === 201)
          outcome.orderId = (JSON.parse(outcome.body) as { orderId: string }).orderId;
      })
      .catch((error: unknown) => {
        outcome.error = errorCode(error);
      })
      .finally(() => pending.delete(request));
    pending.add(request);
    if (i + 1 === SIGTERM_AFTER) onSent(i + 1);
  }
  await Promise.all(pending);
  return outcomes;
}

/**
 * README: "On SIGTERM a service stops taking requests, finishes in-flight ones, drains its consumers
 * and RPC handlers, closes its pools and exits 0." Under load, no request fails and no event is lost.
 */
describe('orders under load receives SIGTERM', () => {
  let env: TestEnvironment;
  let vars: Record<string, string>;
  let merchant: TestMerchant;
  let events: EventCollector;
  let db: pg.Client;
  const started: ServiceProcess[] = [];

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run "npx turbo run build --filter=@byrd/orders" first`);
    env = await TestEnvironment.create();
    vars = await env.serviceEnv('orders', { HTTP_PORT: String(await freePort()), LOG_LEVEL: 'warn' });
    await runMigrations({ url: vars.DATABASE_URL, entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS });
    merchant = await env.createMerchant();
    events = await env.collect('order.>');
    db = new pg.Client({ connectionString: vars.DATABASE_URL });
    await db.connect();
  });
  /** Until a query of the service waits for a lock the test's own transaction holds. */
  async function untilAQueryWaitsForALock(): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows[0].n > 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  afterAll(async () => {
    for (const service of started) service.child.kill('SIGKILL');
    await db?.end();
    await env?.cleanup();
  });

  // Two service processes started one after the other: each may take 20 s or more on a loaded CI
  // machine (startServiceProcess waits up to 45 s), so together past the 60 s default.
  it('answers every request it took, refuses the rest before taking them, exits 0 and loses no event', async () => {
    const service = await startServiceProcess(MAIN, vars);
    started.push(service);
    let sigtermAt = Infinity;
    const outcomes = await fireStream(
      `http://127.0.0.1:${vars.HTTP_PORT}/api/v2/orders`,
      merchant.apiKey,
      () => {
        sigtermAt = performance.now();
        service.child.kill('SIGTERM');
      },
    );
    const exitCode = await service.exited();
    const log = service.output();

    expect({ exitCode, log: exitCode === 0 ? '' : log }).toEqual({ exitCode: 0, log: '' });

    const { rows } = await db.query<{ order_ref: string; id: string }>(
      `SELECT order_ref, id FROM orders WHERE merchant_id = $1`,
      [merchant.merchantId],
    );
    const stored = new Map<string, string[]>();
    for (const row of rows) stored.set(row.order_ref, [...(stored.get(row.order_ref) ?? []), row.id]);

    // No HTTP error at all: a request the service took is answered 201 (no 5xx, no 503 while closing).
    const answeredOtherwise = outcomes.filter((o) => o.status !== undefined && o.status !== 201);
    expect(answeredOtherwise.map((o) => `${o.orderRef}: ${o.status} ${o.body}`)).toEqual([]);
    // Every request that had reached the service when SIGTERM arrived is finished, with its order.
    const reached = outcomes.filter((o) => o.sentAt <= sigtermAt - REACHED_MS);
    expect(reached.length).toBeGreaterThan(SIGTERM_AFTER / 2);
    expect(reached.filter((o) => o.status !== 201).map((o) => `${o.orderRef}: ${o.error}`)).toEqual([]);
    // A request that failed did so at connection level, before the service took it: no order exists
    // for it (an order without its 201 would be an accepted request whose answer was lost).
    const failed = outcomes.filter((o) => o.error !== undefined);
    expect(failed.filter((o) => !REFUSED.has(o.error!)).map((o) => `${o.orderRef}: ${o.error}`)).toEqual([]);
    expect(failed.filter((o) => stored.has(o.orderRef)).map((o) => `${o.orderRef}: ${o.error}`)).toEqual([]);
    // Each 201 is exactly one stored order, the one it announced.
    const created = outcomes.filter((o) => o.status === 201);
    for (const o of created)
      expect({ ref: o.orderRef, ids: stored.get(o.orderRef) }).toEqual({ ref: o.orderRef, ids: [o.orderId] });
    expect(rows).toHaveLength(created.length);

    // Events: whatever the relay had not published before exit is published after a restart, once.
    const restarted = await startServiceProcess(MAIN, vars);
    started.push(restarted);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const pending = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox`);
      const seen = new Set(
        events.ofType('order.created').map((e) => (e.envelope.data as { orderId: string }).orderId),
      );
      if (pending.rows[0].n === 0 && created.every((o) => seen.has(o.orderId!))) break;
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300)); // time for a duplicate to show up, were there one
    const announced = events
      .ofType('order.created')
      .map((e) => (e.envelope.data as { orderId: string }).orderId);
    expect([...announced].sort()).toEqual(created.map((o) => o.orderId).sort());
    expect(new Set(announced).size).toBe(announced.length);

    restarted.child.kill('SIGTERM');
    expect(await restarted.exited()).toBe(0);
  }, 120_000);

  it('publishes before it exits the event of an RPC request (a cancel) that commits after SIGTERM', async () => {
    const service = await startServiceProcess(MAIN, vars);
    started.push(service);
    const created = await fetch(`http://127.0.0.1:${vars.HTTP_PORT}/api/v2/orders`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '12.50', currency: 'EUR' }),
    });
    const order = (await created.json()) as { orderId: string; checkoutKey: string };
    const bff = new Rpc(
      env.nats,
      'hosted-form-bff',
      // Trusting orders' key, as every service does: it believes only the reply orders signed.
      env.rpcIdentity('hosted-form-bff'),
    );

    // The shopper's cancel waits for the order's row, which another transaction holds.
    const holder = new pg.Client({ connectionString: vars.DATABASE_URL });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.orderId]);
    const cancel = bff.call('rpc.orders.cancel', { orderId: order.orderId, checkoutKey: order.checkoutKey });
    await untilAQueryWaitsForALock();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_500)); // the outbox's last pass would run meanwhile
    await holder.query('COMMIT');
    await holder.end();

    expect(await cancel).toMatchObject({ orderId: order.orderId, status: 'canceled' });
    expect(await service.exited()).toBe(0);
    await events.waitFor((e) => e.type === 'order.canceled' && e.data.orderId === order.orderId);
    const pending = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox`);
    expect(pending.rows[0].n).toBe(0);
  });

  it('takes no RPC request once SIGTERM arrives, while it still finishes an HTTP request it took', async () => {
    const service = await startServiceProcess(MAIN, vars);
    started.push(service);
    // The HTTP request waits for the orders table, which another transaction holds against writes.
    const holder = new pg.Client({ connectionString: vars.DATABASE_URL });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE orders IN SHARE MODE');
    const create = fetch(`http://127.0.0.1:${vars.HTTP_PORT}/api/v2/orders`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '3.00', currency: 'EUR', orderRef: 'drain-rpc' }),
    });
    await untilAQueryWaitsForALock();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));

    // A shopper's request now goes to a replica that stays (here: none answers), not to this one.
    const asked = env.nats.nc.request(env.nats.subject('rpc.orders.get'), '{}', { timeout: 2_000 });
    await expect(asked).rejects.toThrow(/no responders/i);

    await holder.query('COMMIT');
    await holder.end();
    // Its answer ends the kept-alive connection (fetch keeps it), so the server closes and exits 0.
    expect((await create).status).toBe(201);
    const exitCode = await service.exited();
    expect({ exitCode, log: exitCode === 0 ? '' : service.output() }).toEqual({ exitCode: 0, log: '' });
  });

  it('stops at once on SIGTERM while its start waits on a database that never answers', async () => {
    // A database that accepts the connection and never says a word (a blackholed address).
    let reached!: () => void;
    const connected = new Promise<void>((resolve) => (reached = resolve));
    const silent = createServer(() => reached());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH, ...vars, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await connected; // its start now waits for the database
      const signalled = Date.now();
      child.kill('SIGTERM');
      // Exits by itself, as PID 1 of a container must (a signal without a handler is ignored there).
      expect(await exited).toBe(1);
      expect(Date.now() - signalled).toBeLessThan(2_000);
      expect(output).toContain('SIGTERM received while orders was starting; exiting');
    } finally {
      child.kill('SIGKILL');
      silent.close();
    }
  });
});
