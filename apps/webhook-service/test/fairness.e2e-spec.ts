import { randomUUID } from 'node:crypto';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const CONCURRENCY = 8;
const TIMEOUT_MS = 4_000;

/**
 * Fairness between merchants' endpoints (docs/webhook-fairness.md): one merchant's receiver with a
 * backlog of due webhooks that hangs or fails does not hold back another merchant's webhooks, and
 * what the failing one waits for is held, not dropped.
 */
describe('fairness between endpoints', () => {
  let h: WebhookHarness;
  let noisy: Receiver;
  let healthy: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_LEASE_MS: String(TIMEOUT_MS * 3),
      WEBHOOK_RETRY_UNIT_MS: '50',
      WEBHOOK_BREAKER_FAILURES: '5',
      WEBHOOK_BREAKER_COOLDOWN_MS: '400',
      LOG_LEVEL: 'error',
    });
    noisy = await Receiver.start();
    healthy = await Receiver.start();
  });
  afterAll(async () => {
    await noisy?.stop();
    await healthy?.stop();
    await h?.stop();
  });

  /** A merchant whose setting points at `url`, with `backlog` webhooks due now inserted for it. */
  async function merchantWithBacklog(url: string, backlog: number) {
    const merchant = await h.freshMerchant();
    const setting = await h.subscribe({ url: `${url}?${randomUUID()}` });
    await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, next_attempt_at, created_at)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}',
         now(), 'pending', now() - interval '1 minute' + g * interval '1 millisecond', now()
       FROM generate_series(1, $3::int) g`,
      [merchant.merchantId, setting.id, backlog],
    );
    return setting.id as string;
  }

  /** Publishes `count` events for a fresh merchant subscribed at the healthy receiver. */
  async function publishForHealthyMerchant(count: number) {
    await h.freshMerchant();
    const setting = await h.subscribe({ url: `${healthy.url}?${randomUUID()}` });
    const events = [];
    for (let i = 0; i < count; i++) events.push(await h.publish('order.paid', 'card'));
    return { settingId: setting.id as string, eventIds: events.map((e) => e.id) };
  }

  async function statusesOf(settingsId: string) {
    const [row] = await h.rows(
      `SELECT count(*)::int AS total,
         count(*) FILTER (WHERE status = 'pending')::int AS pending,
         count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
         coalesce(sum(attempt_count), 0)::int AS attempts
       FROM webhooks WHERE settings_id = $1`,
      [settingsId],
    );
    return row as { total: number; pending: number; succeeded: number; attempts: number };
  }

  it('a receiver that never answers holds only its share of the slots: another merchant is served meanwhile', async () => {
    noisy.answer = () => ({ hold: true });
    const noisySetting = await merchantWithBacklog(noisy.url, 500);
    // The backlog is being worked on: the hung receiver holds its requests.
    await noisy.waitFor((r) => r.length >= 1, 5_000, 'the first request of the backlog');
    const started = Date.now();
    const { eventIds } = await publishForHealthyMerchant(10);
    await healthy.waitFor((r) => r.length >= 10, TIMEOUT_MS - 1_000, "the other merchant's 10 webhooks");
    // Served while every request at the hung receiver was still waiting for its timeout.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(noisy.received.length).toBe(CONCURRENCY / 2);
    expect(new Set(healthy.received.map((r) => r.json.id)).size).toBe(eventIds.length);

    // The hung requests time out and are retried; nothing of the backlog is lost.
    noisy.answer = () => ({ status: 200 });
    await h.waitForRow(
      `SELECT count(*)::int AS n FROM webhooks WHERE settings_id = $1 AND status = 'succeeded'`,
      [noisySetting],
      ([row]) => row.n === 500,
      30_000,
    );
    const done = await statusesOf(noisySetting);
    expect(done).toMatchObject({ total: 500, pending: 0, succeeded: 500 });
    expect(new Set(noisy.received.filter((r) => r.json).map((r) => r.json.id)).size).toBe(500);
  }, 60_000);

  it('a failing receiver trips its circuit: its backlog waits, untouched and whole, while another merchant is served, and flows once a probe succeeds', async () => {
    noisy.received.length = 0;
    healthy.received.length = 0;
    noisy.answer = () => ({ status: 500, body: 'down' });
    const noisySetting = await merchantWithBacklog(noisy.url, 300);
    let lastMetrics = '';
    await waitForMetric(/^webhook_endpoint_circuits_open 1$/m);

    // Held: after the failures that opened it, only probes, one per cool-down (400, 800, 1600 ms).
    const atOpen = noisy.received.length;
    expect(atOpen).toBeGreaterThanOrEqual(5);
    expect(atOpen).toBeLessThanOrEqual(5 + CONCURRENCY / 2);
    const { eventIds } = await publishForHealthyMerchant(20);
    await healthy.waitFor((r) => r.length >= 20, 5_000, "the other merchant's 20 webhooks");
    expect(new Set(healthy.received.map((r) => r.json.id)).size).toBe(eventIds.length);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(noisy.received.length - atOpen).toBeGreaterThanOrEqual(1);
    expect(noisy.received.length - atOpen).toBeLessThanOrEqual(3);
    // Nothing dropped, no attempt spent on what waits: only the rows actually sent were attempted.
    const held = await statusesOf(noisySetting);
    expect(held).toMatchObject({ total: 300, pending: 300, succeeded: 0, attempts: noisy.received.length });

    // The receiver is back: the next probe succeeds, the circuit closes and the backlog flows.
    noisy.answer = () => ({ status: 200 });
    await h.waitForRow(
      `SELECT count(*)::int AS n FROM webhooks WHERE settings_id = $1 AND status = 'succeeded'`,
      [noisySetting],
      ([row]) => row.n === 300,
      20_000,
    );
    await waitForMetric(/^webhook_endpoint_circuits_open 0$/m);
    const metrics = await metricsText();
    expect(metrics).toMatch(/^webhook_endpoint_circuit_changes_total\{to="closed"\} [1-9]/m);

    async function waitForMetric(pattern: RegExp) {
      const deadline = Date.now() + 10_000;
      while (!pattern.test((lastMetrics = await metricsText()))) {
        if (Date.now() > deadline) throw new Error(`metrics never matched ${pattern}:\n${lastMetrics}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }, 60_000);

  it("resends take slots of their endpoint's share: many to a receiver that never answers hold only that share, another merchant's events keep their latency, and every resend goes out", async () => {
    noisy.received.length = 0;
    healthy.received.length = 0;
    noisy.answer = () => ({ hold: true });
    // One merchant resends 90 delivered webhooks to an address that never answers (a webhook has one
    // resend to an address queued at most: asking again while it waits queues nothing more).
    const merchant = await h.freshMerchant();
    const setting = await h.subscribe({ url: `${healthy.url}?${randomUUID()}` });
    const ids = (
      await h.rows<{ id: string }>(
        `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
           occurred_at, status, attempt_count, created_at, sent_at, finished_at)
         SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}',
           now(), 'succeeded', 1, now(), now(), now()
         FROM generate_series(1, 90)
         RETURNING id`,
        [merchant.merchantId, setting.id],
      )
    ).map((row) => row.id);
    const resent = await h.request('POST', '/api/v1/webhooks/resend', { ids, url: noisy.url });
    expect(resent.status).toBe(202);
    expect(resent.body.data.resent).toHaveLength(90);
    await noisy.waitFor((r) => r.length >= CONCURRENCY / 2, 5_000, 'the first resends');

    // Another merchant's events, one every 100 ms, each delivered at once, while the resends hang.
    const started = Date.now();
    await h.freshMerchant();
    await h.subscribe({ url: `${healthy.url}?${randomUUID()}` });
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const at = performance.now();
      await h.publish('order.paid', 'card');
      await healthy.waitFor((r) => r.length > i, 1_500, `the other merchant's webhook ${i + 1}`);
      latencies.push(healthy.received[i].at - at);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(Math.max(...latencies)).toBeLessThan(500);
    // Meanwhile the resends held their endpoint's share, no more.
    expect(noisy.received.length).toBe(CONCURRENCY / 2);

    // None is lost: the hung ones time out (an attempt each), the others follow once it answers.
    noisy.answer = () => ({ status: 200 });
    await h.waitForRow(
      `SELECT count(*)::int AS n FROM webhook_resends WHERE webhook_id = ANY ($1::uuid[])`,
      [ids],
      ([row]) => row.n === 0,
      30_000,
    );
    const [attempts] = await h.rows(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE succeeded)::int AS succeeded
       FROM webhook_attempts WHERE webhook_id = ANY ($1::uuid[]) AND kind = 'resend'`,
      [ids],
    );
    expect(attempts).toEqual({ n: 90, succeeded: 90 - CONCURRENCY / 2 });
    expect(noisy.received).toHaveLength(90);
  }, 60_000);

  async function metricsText(): Promise<string> {
    const answer = await fetch(`${h.baseUrl}/metrics`);
    return answer.text();
  }
});
