import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

/** A dead endpoint's webhooks waiting for their next retry, more than one statement cancels in time. */
const BACKLOG = 150_000;

/**
 * Deleting a setting whose endpoint has been failing (where a merchant most wants to stop it) with
 * a large backlog waiting for retries: its webhooks are canceled in short batches, each well inside
 * the statement timeout, instead of one statement holding every row.
 */
describe('deleting a setting with a large backlog', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    // One statement over the whole backlog runs past this on the test machines (2–6 s here).
    h = await WebhookHarness.start({ DATABASE_STATEMENT_TIMEOUT_MS: '1000', LOG_LEVEL: 'error' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  /** A setting with `count` webhooks waiting for their next retry, ten minutes away. */
  async function settingWithBacklog(count: number): Promise<string> {
    const setting = await h.subscribe({ url: `${receiver.url}?${randomUUID()}` });
    await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, attempt_count, next_attempt_at, created_at)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}',
         now(), 'pending', 3, now() + interval '10 minutes' + g * interval '1 millisecond', now()
       FROM generate_series(1, $3::int) g`,
      [h.merchant.merchantId, setting.id, count],
    );
    await h.rows('ANALYZE webhooks');
    return setting.id as string;
  }

  const pendingOf = async (settingsId: string) =>
    (
      await h.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks WHERE settings_id = $1 AND status = 'pending'`,
        [settingsId],
      )
    )[0].n;

  it('answers, and cancels every webhook still waiting for a retry, however many', async () => {
    const setting = { id: await settingWithBacklog(BACKLOG) };

    const deleted = await h.request('DELETE', `/api/v1/settings/${setting.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: setting.id, deleted: true });

    const [counts] = await h.rows<{ pending: number; canceled: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
              count(*) FILTER (WHERE status = 'canceled' AND next_attempt_at IS NULL)::int AS canceled
         FROM webhooks WHERE settings_id = $1`,
      [setting.id],
    );
    expect(counts).toEqual({ pending: 0, canceled: BACKLOG });
    expect(receiver.received).toHaveLength(0);
  });

  it('answers only once the webhook a delivery holds locked for a moment is canceled too', async () => {
    // A claim or a recorder holds a webhook's row while its statement runs; the batches skip it.
    const id = await settingWithBacklog(3);
    const holder = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `SELECT id FROM webhooks WHERE settings_id = $1 ORDER BY next_attempt_at LIMIT 1 FOR UPDATE`,
        [id],
      );
      let answered = false;
      const deleted = h.request('DELETE', `/api/v1/settings/${id}`).finally(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answered).toBe(false);
      await holder.query('COMMIT');
      expect((await deleted).status).toBe(200);
      expect(await pendingOf(id)).toBe(0);
    } finally {
      await holder.end();
    }
  });

  it('two deletes of one setting at once (two replicas) both end, and leave nothing pending', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await settingWithBacklog(10_000);
      const answers = await Promise.all([1, 2].map(() => h.request('DELETE', `/api/v1/settings/${id}`)));
      // The second may find the setting already deleted (404); neither fails.
      const statuses = answers.map((a) => a.status);
      expect(statuses).toContain(200);
      expect(statuses.filter((status) => status !== 200 && status !== 404)).toEqual([]);
      expect(await pendingOf(id)).toBe(0);
    }
  });
});
