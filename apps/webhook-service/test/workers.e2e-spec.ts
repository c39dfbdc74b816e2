import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  callService,
  freePort,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from '../src/database.js';
import { publishEvent, TEST_WEBHOOK_ENV } from './harness.js';
import { Receiver } from './receiver.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
const LEASE_MS = 2_500;
const ACK_WAIT_MS = 5_000;

/**
 * Replicas as in production: built service processes on one database. A worker killed with SIGKILL
 * in the middle of a delivery loses nothing, and two workers never send the same attempt twice.
 */
describe('delivery workers as processes', () => {
  let env: TestEnvironment;
  let vars: Record<string, string>;
  let merchant: TestMerchant;
  let db: pg.Client;
  let receiver: Receiver;
  const started: ServiceProcess[] = [];

  async function startWorker(extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const worker = await startServiceProcess(MAIN, {
      ...vars,
      HTTP_PORT: String(await freePort()),
      ...extra,
    });
    started.push(worker);
    return worker;
  }

  async function rows<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await db.query(sql, params)).rows as T[];
  }

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run "npx turbo run build --filter=@byrd/webhook-service" first`);
    env = await TestEnvironment.create();
    vars = await env.serviceEnv(
      'webhook-service',
      {
        ...TEST_WEBHOOK_ENV,
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_LEASE_MS: String(LEASE_MS),
        // What a killed worker's pulled messages wait before JetStream hands them to another (30 s by
        // default): the first test waits it out once.
        EVENT_ACK_WAIT_MS: String(ACK_WAIT_MS),
        LOG_LEVEL: 'warn',
      },
      { entities: WEBHOOK_ENTITIES, migrations: WEBHOOK_MIGRATIONS },
    );
    merchant = await env.createMerchant();
    db = new pg.Client({ connectionString: vars.DATABASE_URL });
    await db.connect();
    receiver = await Receiver.start();
  });
  // A failed test must not leave its workers delivering during the next one.
  afterEach(() => {
    for (const worker of started.splice(0)) worker.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await receiver?.stop();
    await db?.end();
    await env?.cleanup();
  });

  it('a worker killed with SIGKILL mid-delivery loses nothing: its lease ends and another worker delivers', async () => {
    const first = await startWorker();
    const created = await callService(first.url, merchant.apiKey, 'POST', '/api/v1/settings', {
      url: receiver.url,
      credentialType: 'api-key',
    });
    expect(created.status).toBe(201);
    receiver.answer = (_, i) => (i === 0 ? { hold: true } : { status: 200 });

    const held = await publishEvent(env, merchant.merchantId, 'order.paid');
    await receiver.waitFor((r) => r.length === 1, 10_000, 'the first delivery');
    const claimedBy = receiver.received[0].at;
    first.child.kill('SIGKILL');
    expect(await first.exited()).toBeNull();

    // Published while no worker runs: the durable consumer keeps it for the next one.
    const meanwhile = await publishEvent(env, merchant.merchantId, 'transaction.payment.success');
    const second = await startWorker();

    // The event published meanwhile may have been handed to the dead worker's open pull request;
    // JetStream gives it to the new worker once the consumer's ack wait (ACK_WAIT_MS) has passed.
    await receiver.waitFor((r) => r.length === 3, 45_000, 'both deliveries after the restart');
    const [webhook] = await rows(`SELECT * FROM webhooks WHERE event_id = $1`, [held.id]);
    const retried = receiver.of(webhook.id);
    expect(retried).toHaveLength(2);
    // Not before the dead worker's lease ran out.
    expect(retried[1].at - claimedBy).toBeGreaterThanOrEqual(LEASE_MS - 250);
    expect(retried[1].json.id).toBe(webhook.id);

    const [other] = await rows(`SELECT * FROM webhooks WHERE event_id = $1`, [meanwhile.id]);
    expect(receiver.of(other.id)).toHaveLength(1);
    // The receiver has the request before the worker commits its outcome: wait for that commit.
    const outcomes = () =>
      rows(`SELECT status, attempt_count FROM webhooks WHERE event_id = ANY ($1::uuid[])`, [
        [held.id, meanwhile.id],
      ]);
    let done = await outcomes();
    const deadline = Date.now() + 10_000;
    while (done.some((row) => row.status === 'pending') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      done = await outcomes();
    }
    const attemptCount = (eventId: string) =>
      rows(`SELECT attempt_count FROM webhooks WHERE event_id = $1`, [eventId]).then(
        ([w]) => w.attempt_count,
      );
    expect(done.map((row) => row.status)).toEqual(['succeeded', 'succeeded']);
    expect([await attemptCount(held.id), await attemptCount(meanwhile.id)]).toEqual([2, 1]);
    // The killed attempt was started in the row before its request went out: the next claim recorded
    // it, under the attemptId the receiver got, as one with no outcome, and counted it.
    const attempts = await rows(
      `SELECT id, number, status_code, error, retry_delay_ms FROM webhook_attempts WHERE webhook_id = $1 ORDER BY number`,
      [webhook.id],
    );
    expect(attempts).toEqual([
      {
        id: retried[0].json.attemptId,
        number: 1,
        status_code: null,
        error: expect.stringContaining('No outcome recorded'),
        retry_delay_ms: 10, // one retry minute (WEBHOOK_RETRY_UNIT_MS), as after any failed first attempt
      },
      { id: retried[1].json.attemptId, number: 2, status_code: 200, error: null, retry_delay_ms: null },
    ]);
    second.child.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
  }, 90_000);

  // Two service processes started one after the other: each may take 20 s or more on a loaded CI
  // machine (startServiceProcess waits up to 45 s), so together past the 60 s default.
  it('two workers share the work and never deliver the same attempt twice', async () => {
    // Small concurrency and a slow-ish receiver, so both replicas have work in flight at once.
    // Started side by side: each boot is seconds of CPU that overlap on two cores.
    const [a, b] = await Promise.all([1, 2].map(() => startWorker({ WEBHOOK_CONCURRENCY: '4' })));
    receiver.answer = () => ({ status: 200 });
    const before = receiver.received.length;
    const TOTAL = 200;
    const events = [];
    for (let i = 0; i < TOTAL; i++) events.push(await publishEvent(env, merchant.merchantId, 'order.paid'));

    await receiver.waitFor((r) => r.length >= before + TOTAL, 30_000, `${TOTAL} deliveries`);
    // The receiver has each request before its worker commits the outcome: wait for the commits
    // (a fixed 500 ms was not always enough on a loaded machine), then give a duplicate time to come.
    const ids = events.map((e) => e.id);
    const countsOf = async () =>
      (
        await rows(
          `SELECT count(DISTINCT w.id)::int AS webhooks, count(a.id)::int AS attempts,
                  count(*) FILTER (WHERE w.status = 'succeeded')::int AS succeeded
           FROM webhooks w LEFT JOIN webhook_attempts a ON a.webhook_id = w.id WHERE w.event_id = ANY ($1::uuid[])`,
          [ids],
        )
      )[0];
    for (const deadline = Date.now() + 15_000; (await countsOf()).succeeded < TOTAL && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    const fresh = receiver.received.slice(before);
    expect(fresh).toHaveLength(TOTAL);
    expect(new Set(fresh.map((r) => r.headers['webhook-id'])).size).toBe(TOTAL);
    expect(new Set(fresh.map((r) => r.json.attemptId)).size).toBe(TOTAL);

    expect(await countsOf()).toEqual({ webhooks: TOTAL, attempts: TOTAL, succeeded: TOTAL });

    const delivered = async (worker: ServiceProcess) => {
      const metrics = await callService(worker.url, '', 'GET', '/metrics');
      return Number(
        /^webhook_attempts_total\{kind="scheduled",result="success"\} (\d+)$/m.exec(metrics.body)?.[1] ?? 0,
      );
    };
    const [byA, byB] = [await delivered(a), await delivered(b)];
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    expect(byA + byB).toBe(TOTAL);
  }, 120_000);
});
