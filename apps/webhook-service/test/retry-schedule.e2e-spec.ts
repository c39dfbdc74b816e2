import { callService } from '@byrd/platform/testing';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const UNIT_MS = 10;

describe('the retry schedule (SPEC.md "Limits")', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({ WEBHOOK_RETRY_UNIT_MS: String(UNIT_MS), WEBHOOK_POLL_MS: '20' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  it('retries 50 times after min(n, 60) minutes, then fails; a resend in between is an extra attempt that changes nothing', async () => {
    receiver.answer = () => ({ status: 500, body: 'broken' });
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('transaction.payment.failed', 'card');

    await receiver.waitFor((r) => r.length >= 5, 10_000, 'five attempts');
    const [webhook] = await h.webhooksOf(event.id);
    const resend = await h.request('POST', '/api/v1/webhooks/resend', { ids: [webhook.id] });
    expect(resend.status).toBe(202);

    const [failed] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE id = $1`,
      [webhook.id],
      ([w]) => w.status !== 'pending',
      40_000,
    );
    expect(failed).toMatchObject({
      status: 'failed',
      attempt_count: 51,
      sent_at: null,
      next_attempt_at: null,
    });
    expect(failed.finished_at).not.toBeNull();

    // Nothing after the 51st attempt.
    await new Promise((r) => setTimeout(r, 60 * UNIT_MS + 200));
    const attempts = await h.rows(
      `SELECT id, kind, number, status_code, retry_delay_ms FROM webhook_attempts WHERE webhook_id = $1 ORDER BY created_at`,
      [webhook.id],
    );
    const scheduled = attempts.filter((a) => a.kind === 'scheduled');
    expect(attempts.filter((a) => a.kind === 'resend')).toHaveLength(1);
    expect(scheduled.map((a) => a.number)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect(scheduled.every((a) => a.status_code === 500)).toBe(true);
    // The delay chosen after attempt n is exactly min(n, 60) minutes; none after the last.
    expect(scheduled.map((a) => a.retry_delay_ms)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => Math.min(i + 1, 60) * UNIT_MS),
      null,
    ]);
    expect(receiver.received).toHaveLength(52);

    // And the receiver saw them that far apart (a scheduled attempt is never early, and not much late).
    const kindOf = new Map(attempts.map((a) => [a.id, a.kind]));
    const arrivals = receiver.received
      .filter((r) => kindOf.get(r.json.attemptId) === 'scheduled')
      .map((r) => r.at);
    expect(arrivals).toHaveLength(51);
    const gaps = arrivals.slice(1).map((at, i) => ({ n: i + 1, gap: Math.round(at - arrivals[i]) }));
    expect(gaps.filter(({ n, gap }) => gap < n * UNIT_MS - 2)).toEqual([]);
    // Late by a poll or two; a stall of the shared test machine (a WAL flush of a few hundred ms, or
    // another workspace's suite running beside this one: 7 of 50 seen) may hold up some of the fifty,
    // but never by a second.
    const late = gaps.filter(({ n, gap }) => gap > n * UNIT_MS + 150);
    expect(late.length).toBeLessThanOrEqual(10);
    expect(late.filter(({ n, gap }) => gap > n * UNIT_MS + 1_000)).toEqual([]);

    const listed = await h.request('GET', '/api/v1/webhooks');
    expect(listed.body.data[0]).toMatchObject({ id: webhook.id, sentAt: null });
    const metrics = await callService(h.baseUrl, '', 'GET', '/metrics');
    expect(metrics.body).toMatch(/^webhook_deliveries_total\{outcome="failed"\} 1$/m);
    expect(metrics.body).toMatch(/^webhook_attempts_total\{kind="scheduled",result="failure"\} 51$/m);
  });
});
