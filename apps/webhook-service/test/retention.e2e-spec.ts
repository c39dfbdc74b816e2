import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const SUCCEEDED_MS = 1_500;
const FAILED_MS = 3_500;

describe('retention', () => {
  let h: WebhookHarness;
  let ok: Receiver;
  let broken: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_RETRY_UNIT_MS: '1',
      WEBHOOK_BREAKER_COOLDOWN_MS: '1',
      WEBHOOK_POLL_MS: '10',
      WEBHOOK_RETENTION_SUCCEEDED_MS: String(SUCCEEDED_MS),
      WEBHOOK_RETENTION_FAILED_MS: String(FAILED_MS),
      WEBHOOK_RETENTION_SWEEP_MS: '100',
      WEBHOOK_RETENTION_BATCH: '2',
    });
    ok = await Receiver.start();
    broken = await Receiver.start();
    broken.answer = () => ({ status: 500 });
  });
  afterAll(async () => {
    await ok?.stop();
    await broken?.stop();
    await h?.stop();
  });

  it('removes succeeded webhooks after their period and failed ones after theirs, never one still being retried', async () => {
    for (let i = 0; i < 5; i++) await h.subscribe({ url: `${ok.url}?${i}` });
    const failing = await h.subscribe({ url: `${broken.url}?fails` });
    const retrying = await h.subscribe({ url: `${broken.url}?retrying` });
    const event = await h.publish('order.paid', 'card');
    const created = Date.now();
    await h.waitForRow(
      `SELECT 1 FROM webhooks WHERE event_id = $1 AND status = 'succeeded'`,
      [event.id],
      (r) => r.length === 5,
    );
    // The retrying one waits an hour for its next attempt: it is still being retried.
    const [pending] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE event_id = $1 AND settings_id = $2`,
      [event.id, retrying.id],
      ([w]) => w?.attempt_count >= 1,
    );
    // (Only between two attempts: a worker holding it would write its own next time over this.)
    await h.waitForRow(
      `UPDATE webhooks SET next_attempt_at = now() + interval '1 hour'
       WHERE id = $1 AND status = 'pending' AND lease_token IS NULL RETURNING id`,
      [pending.id],
      (updated) => updated.length === 1,
    );

    // Succeeded ones go after their period (in batches of 2), with their attempts.
    await h.waitForRow(
      `SELECT 1 FROM webhooks WHERE event_id = $1 AND status = 'succeeded'`,
      [event.id],
      (r) => r.length === 0,
    );
    expect(Date.now() - created).toBeGreaterThanOrEqual(SUCCEEDED_MS - 50);
    expect(
      (
        await h.rows(`SELECT 1 FROM webhooks WHERE event_id = $1 AND settings_id = $2`, [
          event.id,
          failing.id,
        ])
      ).length,
    ).toBe(1);
    await h.waitForRow(
      `SELECT status FROM webhooks WHERE event_id = $1 AND settings_id = $2`,
      [event.id, failing.id],
      ([w]) => w?.status === 'failed',
    );
    // Their attempts went with them: only the failed and the retrying webhooks still have some.
    const withAttempts = await h.rows(
      `SELECT DISTINCT w.settings_id FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id WHERE w.event_id = $1`,
      [event.id],
    );
    expect(withAttempts.map((r) => r.settings_id).sort()).toEqual([failing.id, retrying.id].sort());
    expect((await h.rows(`SELECT count(*)::int AS n FROM webhook_attempts`))[0].n).toBeGreaterThanOrEqual(52);

    // Failed ones after theirs.
    await h.waitForRow(
      `SELECT 1 FROM webhooks WHERE event_id = $1 AND status = 'failed'`,
      [event.id],
      (r) => r.length === 0,
    );
    expect(Date.now() - created).toBeGreaterThanOrEqual(FAILED_MS - 50);

    // The one being retried stays, with its attempt history.
    const [kept] = await h.rows(`SELECT * FROM webhooks WHERE id = $1`, [pending.id]);
    expect(kept).toMatchObject({ status: 'pending' });
    expect(
      (await h.rows(`SELECT 1 FROM webhook_attempts WHERE webhook_id = $1`, [pending.id])).length,
    ).toBeGreaterThanOrEqual(1);
  });
});
