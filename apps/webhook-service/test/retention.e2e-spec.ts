import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PurgeWebhooks } from '../src/retention/purge-webhooks.usecase.js';
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

  describe('a resend racing the sweep', () => {
    let hand: pg.Client;
    let setting: { id: string };

    beforeAll(async () => {
      await h.freshMerchant();
      setting = await h.subscribe({ url: `${ok.url}?resends` });
    });
    beforeEach(async () => {
      hand = new pg.Client({
        host: h.db.host,
        port: h.db.port,
        user: h.db.user,
        database: h.db.database,
      });
      await hand.connect();
    });
    afterEach(async () => {
      await hand.query('ROLLBACK').catch(() => undefined);
      await hand.end();
    });

    /**
     * A webhook of the merchant that ended `ageMs` ago (delivered, or failed for good), with its
     * attempt: one statement, so the service's own purge never finds the webhook without it.
     */
    async function delivered(id: string, ageMs: number, status: 'succeeded' | 'failed' = 'succeeded') {
      await h.rows(
        `WITH webhook AS (
           INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
             occurred_at, status, created_at, sent_at, finished_at)
           VALUES ($1, $2, $3, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}', now(), $5,
             now() - $4::int * interval '1 millisecond', CASE WHEN $5 = 'succeeded' THEN now() END,
             now() - $4::int * interval '1 millisecond')
           RETURNING id)
         INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, status_code,
           duration_ms, succeeded, created_at)
         SELECT gen_random_uuid(), id, 'scheduled', 1, 'http://127.0.0.1/', '{}', 200, 1, true, now()
         FROM webhook`,
        [id, h.merchant.merchantId, setting.id, ageMs, status],
      );
    }

    /**
     * Waits until `n` sessions wait for a lock (directly or behind another waiting one), running a
     * statement like `statement` when given: another session's passing wait must not stand for it.
     */
    async function waiting(n: number, statement = '%') {
      await h.waitForRow(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [statement],
        ([row]) => row.n >= n,
      );
    }

    it('keeps a failed webhook that a resend delivered for the period of a success from that resend', async () => {
      const id = randomUUID();
      ok.answer = () => ({ status: 200 });
      // Failed an hour ago, but held (as a resend being asked holds it) until its resend is queued:
      // the sweep, every 100 ms here, could otherwise take it before the resend is asked.
      await delivered(id, 0, 'failed');
      await hand.query('BEGIN');
      await hand.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR KEY SHARE`, [id]);
      await h.rows(
        `UPDATE webhooks SET created_at = now() - interval '1 hour', finished_at = now() - interval '1 hour'
         WHERE id = $1`,
        [id],
      );
      expect((await h.request('POST', '/api/v1/webhooks/resend', { ids: [id] })).status).toBe(202);
      await hand.query('COMMIT');
      await h.waitForRow(
        `SELECT status FROM webhooks WHERE id = $1`,
        [id],
        ([w]) => w?.status === 'succeeded',
      );

      await h.app.get(PurgeWebhooks).execute();
      // Its merchant is looking at it now: the history stays, both attempts.
      expect(await h.rows(`SELECT id FROM webhook_attempts WHERE webhook_id = $1`, [id])).toHaveLength(2);
      // And goes a success's period later.
      await h.waitForRow(`SELECT id FROM webhooks WHERE id = $1`, [id], (r) => r.length === 0, 10_000);
    });

    it('a webhook the sweep is deleting is not found by a resend asked meanwhile (202, not a 500)', async () => {
      const id = randomUUID();
      // Recent until this session holds its attempts: an old one could go before they are locked.
      await delivered(id, 0);
      // The sweep's transaction held open by hand: it has taken the webhook and waits to delete its
      // attempts, which this session holds.
      await hand.query('BEGIN');
      await hand.query(`SELECT 1 FROM webhook_attempts WHERE webhook_id = $1 FOR UPDATE`, [id]);
      await h.rows(
        `UPDATE webhooks SET created_at = now() - interval '1 hour', finished_at = now() - interval '1 hour'
         WHERE id = $1`,
        [id],
      );
      await waiting(1, '%DELETE FROM webhooks w%'); // the sweep's delete, not any passing wait
      const resend = h.request('POST', '/api/v1/webhooks/resend', { ids: [id] });
      await waiting(2); // the resend waits for the sweep
      await hand.query('COMMIT');
      expect(await resend).toMatchObject({ status: 202, body: { data: { resent: [], notFound: [id] } } });
      expect(await h.rows(`SELECT id FROM webhooks WHERE id = $1`, [id])).toEqual([]);
      expect(await h.rows(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [id])).toEqual([]);
    });

    it('a webhook whose resend is being asked is kept by the sweep, and while the resend is queued; the resend goes out', async () => {
      // The resend locks its webhooks in id order: it has the old one when it waits for the other.
      const [old, other] = [randomUUID(), randomUUID()].sort();
      // Both recent for now: the sweep (every 100 ms here) must not take the old one before the resend.
      await delivered(old, 0);
      await delivered(other, 0);
      ok.received.length = 0;
      ok.answer = (request) => (request.headers['webhook-id'] === old ? { hold: true } : { status: 200 });
      const purge = h.app.get(PurgeWebhooks);
      try {
        await hand.query('BEGIN');
        await hand.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE`, [other]);
        const resend = h.request('POST', '/api/v1/webhooks/resend', { ids: [old, other] });
        await waiting(1);
        // Past its retention now, while the resend holds it.
        await h.rows(`UPDATE webhooks SET created_at = now() - interval '1 hour' WHERE id = $1`, [old]);
        await purge.execute();
        expect(await h.rows(`SELECT id FROM webhooks WHERE id = $1`, [old])).toHaveLength(1);
        await hand.query('COMMIT');
        expect(await resend).toMatchObject({
          status: 202,
          body: { data: { resent: [old, other], notFound: [] } },
        });

        // Queued, then in flight: kept.
        await ok.waitFor((r) => r.some((x) => x.headers['webhook-id'] === old), 15_000, 'the resend');
        await purge.execute();
        expect(await h.rows(`SELECT id FROM webhooks WHERE id = $1`, [old])).toHaveLength(1);
        // Once its attempt is recorded (the receiver never answers: a timeout) and the resend gone, the
        // webhook goes too. Sent once, as was the other one.
        await h.waitForRow(`SELECT id FROM webhooks WHERE id = $1`, [old], (r) => r.length === 0);
        await ok.waitFor((r) => r.some((x) => x.headers['webhook-id'] === other), 15_000, 'the other resend');
        expect(ok.of(old)).toHaveLength(1);
        expect(ok.of(other)).toHaveLength(1);
      } finally {
        ok.answer = () => ({ status: 200 });
      }
    });
  });
});
