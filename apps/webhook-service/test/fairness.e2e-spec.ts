import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const CAP = 4;
const NEVER = '10000'; // failures in a row: a breaker that never opens during a test

/**
 * Inserts `count` webhooks of the harness's current merchant, due for a while already (older than
 * anything published afterwards), straight into `webhooks`: a receiver's backlog, as the bench's
 * noisy-neighbour phase builds it.
 */
async function backlog(
  h: WebhookHarness,
  settingsId: string,
  count: number,
  dueSinceMs = 3_600_000,
): Promise<void> {
  await h.rows(
    `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
       occurred_at, status, next_attempt_at, created_at)
     SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card',
       jsonb_build_object('orderId', gen_random_uuid()), now() - $4::int * interval '1 millisecond',
       'pending', now() - ($4::int - g) * interval '1 millisecond', now() - $4::int * interval '1 millisecond'
     FROM generate_series(1, $3::int) AS g`,
    [h.merchant.merchantId, settingsId, count, dueSinceMs],
  );
}

function pendingOf(h: WebhookHarness, settingsId: string) {
  return h.rows<{ pending: number; attempts: number; failed: number }>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
            coalesce(sum(attempt_count), 0)::int AS attempts,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
     FROM webhooks WHERE settings_id = $1`,
    [settingsId],
  );
}

function circuitOf(h: WebhookHarness, settingsId: string) {
  return h.rows(`SELECT state, failures FROM webhook_circuits WHERE settings_id = $1`, [settingsId]);
}

describe('fairness between endpoints: per-endpoint cap (breaker out of the way)', () => {
  let h: WebhookHarness;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const started = await Receiver.start();
    receivers.push(started);
    return started;
  };

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CAP),
      WEBHOOK_BREAKER_FAILURES: NEVER,
      WEBHOOK_CONCURRENCY: '32',
    });
  });
  afterAll(() => h?.stop());
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.stop();
  });

  it('never has more than WEBHOOK_ENDPOINT_CONCURRENCY requests in flight at one endpoint', async () => {
    await h.freshMerchant();
    const slow = await receiver();
    slow.answer = () => ({ status: 200, delayMs: 40 });
    const settings = await h.subscribe({ url: slow.url });
    await backlog(h, settings.id, 60);

    await slow.waitFor((r) => r.length >= 60, 20_000, 'the 60 deliveries');
    await h.waitForRow(
      `SELECT * FROM webhooks WHERE settings_id = $1 AND status = 'pending'`,
      [settings.id],
      (rows) => rows.length === 0,
    );
    // The worker had 32 slots and 60 due rows: only the cap kept it at 4.
    expect(slow.maxInFlight).toBe(CAP);
    expect(slow.received).toHaveLength(60);
  });

  it('a hanging endpoint with a large backlog does not hold back another merchant', async () => {
    await h.freshMerchant();
    const hanging = await receiver();
    hanging.answer = () => ({ hold: true }); // until WEBHOOK_TIMEOUT_MS (1 s) gives up
    const noisy = await h.subscribe({ url: hanging.url });
    await backlog(h, noisy.id, 2_000);

    await h.freshMerchant();
    const healthy = await receiver();
    await h.subscribe({ url: healthy.url });
    await hanging.waitFor((r) => r.length >= CAP, 10_000, 'the noisy backlog being worked on');
    const events = [];
    for (let i = 0; i < 40; i++) events.push(await h.publish('order.paid'));

    // Delivered in between the noisy endpoint's attempts, not behind its 2 000 older rows: without
    // the cap, every slot hangs on the backlog for a timeout per wave (2 000 / 32 waves).
    await healthy.waitFor((r) => r.length === 40, 15_000, "the healthy merchant's 40 deliveries");
    expect(new Set(healthy.received.map((r) => r.json.content.orderId))).toEqual(
      new Set(events.map((e) => (e.data as { orderId: string }).orderId)),
    );
    expect(hanging.maxInFlight).toBeLessThanOrEqual(CAP);
    const [noisyRows] = await pendingOf(h, noisy.id);
    expect(noisyRows.pending).toBe(2_000);
    expect(hanging.received.length).toBeLessThan(100);
  }, 30_000);
});

describe('fairness between endpoints: circuit breaker', () => {
  let h: WebhookHarness;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const started = await Receiver.start();
    receivers.push(started);
    return started;
  };

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CAP),
      WEBHOOK_BREAKER_FAILURES: '3',
      // Long enough that no probe goes out while a test looks, short enough to wait for once.
      WEBHOOK_BREAKER_COOLDOWN_MS: '1500',
    });
  });
  afterAll(() => h?.stop());
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.stop();
  });

  it('opens after N failures in a row and holds the endpoint back without using up attempts, then closes on a good probe and delivers everything', async () => {
    await h.freshMerchant();
    const failing = await receiver();
    failing.answer = () => ({ status: 500, body: 'down' });
    const settings = await h.subscribe({ url: failing.url });
    await backlog(h, settings.id, 200);

    const [open] = await h.waitForRow(
      `SELECT state, failures, opened_at, retry_at FROM webhook_circuits WHERE settings_id = $1`,
      [settings.id],
      ([c]) => c?.state === 'open',
    );
    expect(open.failures).toBeGreaterThanOrEqual(3);
    const sentWhenOpened = failing.received.length;
    // With a 10 ms retry unit the failed rows are due again at once, 200 rows are waiting: only the
    // open circuit keeps them from the receiver. At most the CAP already in flight may still land.
    await new Promise((r) => setTimeout(r, 700));
    expect(failing.received.length).toBeLessThanOrEqual(sentWhenOpened + CAP);
    const [held] = await pendingOf(h, settings.id);
    expect(held).toEqual({ pending: 200, attempts: failing.received.length, failed: 0 });

    // The receiver comes back: the probe after the cool-down closes the circuit, the rest follows.
    const failedAttempts = failing.received.length;
    failing.answer = () => ({ status: 200 });
    await h.waitForRow(
      `SELECT status FROM webhooks WHERE settings_id = $1 AND status <> 'succeeded'`,
      [settings.id],
      (rows) => rows.length === 0,
      20_000,
    );
    expect(await circuitOf(h, settings.id)).toEqual([{ state: 'closed', failures: 0 }]);
    const [done] = await pendingOf(h, settings.id);
    // One successful attempt per webhook, plus the failures before the circuit opened: holding back
    // cost no attempt.
    expect(done).toEqual({ pending: 0, attempts: 200 + failedAttempts, failed: 0 });
    expect(failing.received).toHaveLength(200 + failedAttempts);
    expect(new Set(failing.received.slice(failedAttempts).map((r) => r.headers['webhook-id'])).size).toBe(
      200,
    );
  }, 40_000);

  it('a failed probe opens the circuit again: one request per cool-down while the endpoint stays down', async () => {
    await h.freshMerchant();
    const failing = await receiver();
    failing.answer = () => ({ status: 503 });
    const settings = await h.subscribe({ url: failing.url });
    await backlog(h, settings.id, 50);
    await h.waitForRow(
      `SELECT state FROM webhook_circuits WHERE settings_id = $1`,
      [settings.id],
      ([c]) => c?.state === 'open',
    );
    const opened = failing.received.length;

    // Two cool-downs (1.5 s each) and a bit: two probes, each failing.
    await new Promise((r) => setTimeout(r, 3_600));
    const probes = failing.received.slice(opened);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.length).toBeLessThanOrEqual(3);
    expect(await circuitOf(h, settings.id)).toEqual([
      { state: 'open', failures: 3 + probes.length + (opened - 3) },
    ]);
    const [rows] = await pendingOf(h, settings.id);
    expect(rows).toEqual({ pending: 50, attempts: failing.received.length, failed: 0 });
  }, 20_000);
});

describe('fairness between endpoints: an endpoint that never comes back', () => {
  let h: WebhookHarness;
  let failing: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CAP),
      WEBHOOK_BREAKER_FAILURES: '3',
      WEBHOOK_BREAKER_COOLDOWN_MS: '60000',
      WEBHOOK_RETENTION_SWEEP_MS: '200',
    });
    failing = await Receiver.start();
  });
  afterAll(async () => {
    await failing?.stop();
    await h?.stop();
  });

  it('fails the webhooks held back for longer than the whole retry schedule, without attempting them', async () => {
    failing.answer = () => ({ status: 500 });
    const settings = await h.subscribe({ url: failing.url });
    // Due for 20 s: longer than the schedule lasts with 10 ms units (1 275 units = 12.75 s).
    await backlog(h, settings.id, 100, 20_000);

    await h.waitForRow(
      `SELECT state FROM webhook_circuits WHERE settings_id = $1`,
      [settings.id],
      ([c]) => c?.state === 'open',
    );
    const rows = await h.waitForRow<{ status: string; attempt_count: number }>(
      `SELECT status, attempt_count FROM webhooks WHERE settings_id = $1`,
      [settings.id],
      (all) => all.filter((w) => w.status === 'failed').length >= 100 - failing.received.length - CAP,
    );
    // The ones attempted before the circuit opened were rescheduled (due again in 10 ms) and wait;
    // every other one failed without an attempt.
    const attempted = rows.filter((w) => w.attempt_count > 0);
    expect(attempted.length).toBeGreaterThanOrEqual(3);
    expect(attempted.length).toBe(failing.received.length);
    expect(attempted.every((w) => w.status === 'pending')).toBe(true);
    expect(rows.filter((w) => w.attempt_count === 0).every((w) => w.status === 'failed')).toBe(true);
  });
});
