import { randomUUID } from 'node:crypto';
import { ExpireHeldWebhooks } from '../src/retention/expire-held-webhooks.usecase.js';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const UNIT_MS = 10;
const SPAN_MS = 1_275 * UNIT_MS; // the whole retry schedule

/**
 * A webhook held back by its endpoint's open circuit longer than its whole retry schedule lasts ends
 * failed, as it would have after its last attempt; nothing following its schedule is touched. The
 * sweep is run by hand (no worker delivers here), so the rows stay as the test wrote them.
 */
describe('webhooks held back past their schedule', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_RETRY_UNIT_MS: String(UNIT_MS),
      WEBHOOK_DELIVERY_ENABLED: 'false',
      WEBHOOK_RETENTION_SWEEP_MS: '3600000',
      WEBHOOK_RETENTION_BATCH: '2',
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  async function insert(
    settingsId: string,
    dueInMs: number,
    extra: { leasedForMs?: number; ageMs?: number } = {},
  ) {
    const id = randomUUID();
    await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, attempt_count, next_attempt_at, lease_until, created_at)
       VALUES ($1, $2, $3, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}', now(), 'pending', 4,
         now() + $4::int * interval '1 millisecond',
         CASE WHEN $5::int IS NULL THEN NULL ELSE now() + $5::int * interval '1 millisecond' END,
         now() - $6::int * interval '1 millisecond')`,
      [id, h.merchant.merchantId, settingsId, dueInMs, extra.leasedForMs ?? null, extra.ageMs ?? SPAN_MS * 2],
    );
    return id;
  }

  /** The receiver has failed every attempt since `msAgo` (as the attempts' recorder writes it). */
  const failingFor = (settingsId: string, msAgo: number) =>
    h.rows(
      `UPDATE webhook_settings SET failing_since = now() - $2::int * interval '1 millisecond' WHERE id = $1`,
      [settingsId, msAgo],
    );

  it('fails what waited longer than the schedule lasts, batch by batch and endpoint by endpoint, and nothing else', async () => {
    const first = await h.subscribe({ url: `${receiver.url}?first` });
    const second = await h.subscribe({ url: `${receiver.url}?second` });
    // Two more endpoints with webhooks as old: one nobody has failed to reach (no worker ran: delivery
    // stopped, or a long backlog), one that started failing less than a schedule ago.
    const untried = await h.subscribe({ url: `${receiver.url}?untried` });
    const lately = await h.subscribe({ url: `${receiver.url}?lately` });
    await failingFor(first.id, SPAN_MS * 3);
    await failingFor(second.id, SPAN_MS * 3);
    await failingFor(lately.id, SPAN_MS / 2);
    const held = [
      await insert(first.id, -SPAN_MS - 1_000),
      await insert(first.id, -SPAN_MS - 2_000),
      await insert(first.id, -SPAN_MS - 3_000),
      await insert(second.id, -SPAN_MS - 1_000),
    ];
    const kept = [
      await insert(first.id, -SPAN_MS + 2_000), // held, but not yet that long
      await insert(first.id, -SPAN_MS - 1_000, { leasedForMs: 60_000 }), // a worker is delivering it
      await insert(second.id, 3_600_000, { ageMs: 2 * 86_400_000 }), // old, but waiting as asked (Retry-After)
      await insert(untried.id, -SPAN_MS - 1_000), // never tried: to be delivered, not failed
      await insert(lately.id, -SPAN_MS - 1_000), // its receiver has not failed a whole schedule long
    ];

    const sweep = h.app.get(ExpireHeldWebhooks);
    expect(await sweep.execute()).toBe(4);
    expect(await sweep.execute()).toBe(0);

    const rows = await h.rows(`SELECT * FROM webhooks WHERE id = ANY ($1)`, [[...held, ...kept]]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const id of held) {
      expect(byId.get(id)).toMatchObject({ status: 'failed', next_attempt_at: null, attempt_count: 4 });
      expect(byId.get(id).finished_at).not.toBeNull();
    }
    for (const id of kept) expect(byId.get(id)).toMatchObject({ status: 'pending', attempt_count: 4 });
    // No attempt was made or invented.
    expect((await h.rows(`SELECT count(*)::int AS n FROM webhook_attempts`))[0].n).toBe(0);
    const metrics = await fetch(`${h.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="failed"\} 4$/m);
  });

  it('records when an endpoint starts failing and forgets it at its first success', async () => {
    const delivering = await WebhookHarness.start({ WEBHOOK_RETRY_UNIT_MS: '50' });
    const flaky = await Receiver.start();
    try {
      flaky.answer = () => ({ status: 500, body: 'down' });
      const setting = await delivering.subscribe({ url: flaky.url });
      const failingSince = async () =>
        (await delivering.rows(`SELECT failing_since FROM webhook_settings WHERE id = $1`, [setting.id]))[0]
          .failing_since as Date | null;
      expect(await failingSince()).toBeNull();

      await delivering.publish('order.paid');
      await flaky.waitFor((received) => received.length >= 2, 15_000, 'two failed attempts');
      const [firstFailure] = await delivering.rows(
        `SELECT min(a.created_at) AS at FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
          WHERE w.settings_id = $1`,
        [setting.id],
      );
      // Set by the first failure, not moved by the next.
      expect((await failingSince())?.getTime()).toBe(firstFailure.at.getTime());

      flaky.answer = () => ({ status: 200, body: 'ok' });
      await delivering.waitForRow(
        `SELECT status FROM webhooks WHERE settings_id = $1`,
        [setting.id],
        (rows) => rows[0]?.status === 'succeeded',
      );
      expect(await failingSince()).toBeNull();
    } finally {
      await flaky.stop();
      await delivering.stop();
    }
  });
});
