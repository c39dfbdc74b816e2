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
    extra: { leasedForMs?: number; ageMs?: number; attempts?: number } = {},
  ) {
    const id = randomUUID();
    await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, attempt_count, next_attempt_at, lease_until, created_at)
       VALUES ($1, $2, $3, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}', now(), 'pending', $7,
         now() + $4::int * interval '1 millisecond',
         CASE WHEN $5::int IS NULL THEN NULL ELSE now() + $5::int * interval '1 millisecond' END,
         now() - $6::int * interval '1 millisecond')`,
      [
        id,
        h.merchant.merchantId,
        settingsId,
        dueInMs,
        extra.leasedForMs ?? null,
        extra.ageMs ?? SPAN_MS * 2,
        extra.attempts ?? 4,
      ],
    );
    return id;
  }

  /**
   * The receiver has failed every attempt since `msAgo`, the last one `triedMsAgo` (as the attempts'
   * recorder and EndpointObservations write it); by default it is being tried now.
   */
  const failingFor = (settingsId: string, msAgo: number, triedMsAgo: number | null = 0) =>
    h.rows(
      `UPDATE webhook_settings SET failing_since = now() - $2::int * interval '1 millisecond',
         tried_at = now() - $3::int * interval '1 millisecond'
       WHERE id = $1`,
      [settingsId, msAgo, triedMsAgo],
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

  it('fails nothing nobody is trying: the delivery replicas down for longer than the schedule', async () => {
    // The receiver had failed for two "days" when delivery stopped, a "day" ago: nothing has been
    // tried since, so webhooks that came due meanwhile (no attempt yet) and older ones are kept.
    const down = await h.subscribe({ url: `${receiver.url}?down` });
    const neverTried = await h.subscribe({ url: `${receiver.url}?never` });
    await failingFor(down.id, SPAN_MS * 3, SPAN_MS + 2_000);
    await failingFor(neverTried.id, SPAN_MS * 3, null);
    const kept = [
      await insert(down.id, -SPAN_MS - 1_000, { attempts: 0 }), // came during the outage
      await insert(down.id, -SPAN_MS - 1_000), // attempted before it
      await insert(neverTried.id, -SPAN_MS - 1_000, { attempts: 0 }),
    ];
    expect(await h.app.get(ExpireHeldWebhooks).execute()).toBe(0);
    const rows = await h.rows(`SELECT status, attempt_count FROM webhooks WHERE id = ANY ($1)`, [kept]);
    expect(rows.map((row) => row.status)).toEqual(['pending', 'pending', 'pending']);
  });

  it('starts the failing streak again at the first attempt after nobody tried the endpoint for a while', async () => {
    const delivering = await WebhookHarness.start({ WEBHOOK_RETRY_UNIT_MS: '50' });
    const down = await Receiver.start();
    try {
      down.answer = () => ({ status: 500, body: 'down' });
      const setting = await delivering.subscribe({ url: down.url });
      const twoDays = 2 * 86_400_000;
      const endpoint = async () =>
        (
          await delivering.rows<{ failing_since: Date; tried_at: Date }>(
            `SELECT failing_since, tried_at FROM webhook_settings WHERE id = $1`,
            [setting.id],
          )
        )[0];
      // Failing for two days, last tried a day ago (the replicas were down since).
      await delivering.rows(
        `UPDATE webhook_settings SET failing_since = now() - interval '2 days', tried_at = now() - interval '1 day'
         WHERE id = $1`,
        [setting.id],
      );
      const before = Date.now();
      await delivering.publish('order.paid');
      await down.waitFor((received) => received.length >= 1, 15_000, 'a failed attempt');
      await delivering.waitForRow(
        `SELECT tried_at FROM webhook_settings WHERE id = $1`,
        [setting.id],
        ([row]) => row.tried_at.getTime() >= before - 1_000,
      );
      // The day nobody tried says nothing: the streak starts at this attempt.
      expect((await endpoint()).failing_since.getTime()).toBeGreaterThanOrEqual(before - 1_000);

      // Tried all along (probes of an open circuit): the streak is kept as it is.
      await delivering.rows(
        `UPDATE webhook_settings SET failing_since = now() - interval '2 days', tried_at = now() WHERE id = $1`,
        [setting.id],
      );
      const attempts = down.received.length;
      await down.waitFor((received) => received.length >= attempts + 3, 15_000, 'more failed attempts');
      expect((await endpoint()).failing_since.getTime()).toBeLessThan(Date.now() - twoDays + 60_000);
    } finally {
      await down.stop();
      await delivering.stop();
    }
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
