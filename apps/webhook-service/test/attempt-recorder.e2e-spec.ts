import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { AttemptRecorder } from '../src/delivery/attempt-recorder.js';
import { EndpointObservations, observationGapMs } from '../src/delivery/endpoint-observations.js';
import {
  DeliveryRepository,
  LOST_ATTEMPT_ERROR,
  type AttemptRecord,
  type DeliveryJob,
} from '../src/delivery/delivery.repository.js';
import { WebhookHarness } from './harness.js';

/**
 * The recorder on the real database: outcomes that finish together are written together, and a
 * batch that fails is written one by one, so only the bad record fails.
 */
describe('attempt recorder', () => {
  let h: WebhookHarness;
  let recorder: AttemptRecorder;
  let settingsId: string;

  beforeAll(async () => {
    h = await WebhookHarness.start();
    recorder = h.app.get(AttemptRecorder);
    settingsId = (await h.subscribe({ url: 'http://127.0.0.1:9/hooks' })).id as string;
  });
  afterAll(() => h?.stop());

  /** A pending webhook held by a lease, not due for an hour (no worker touches it). */
  async function leasedWebhook(): Promise<DeliveryJob> {
    const job: DeliveryJob = {
      kind: 'scheduled',
      webhookId: randomUUID(),
      resendId: null,
      leaseToken: randomUUID(),
      attemptId: randomUUID(),
      settingsId,
      event: 'order.paid',
      paymentMethod: 'card',
      content: {
        orderId: randomUUID(),
        orderRef: 'ref-1',
        status: 'paid',
        paymentId: null,
        transactionId: null,
        amount: '25.00',
        currency: 'EUR',
      },
      createdAt: new Date(),
      occurredAt: new Date(),
      attemptCount: 0,
      traceparent: null,
      url: 'http://127.0.0.1:9/hooks',
      toSettingsUrl: true,
      credentialType: 'api-key',
      apiKey: null,
      username: null,
      password: null,
      signingSecret: 'whsec_unused',
      retryOn4xx: false,
    };
    await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, next_attempt_at, lease_token, lease_until)
       VALUES ($1, $2, $3, $4, 'order.paid', 'card', '{}', now(), 'pending', now() + interval '1 hour', $5,
         now() + interval '1 hour')`,
      [job.webhookId, h.merchant.merchantId, settingsId, randomUUID(), job.leaseToken],
    );
    return job;
  }

  const attempt = (id = randomUUID()): AttemptRecord => ({
    id,
    number: 1,
    url: 'http://127.0.0.1:9/hooks',
    requestBody: '{}',
    statusCode: 200,
    responseBody: 'ok',
    error: null,
    durationMs: 3,
    succeeded: true,
    verdict: true,
    startedAt: new Date(),
  });
  const delivered = { status: 'succeeded', retryDelayMs: null } as const;

  it('writes outcomes that finish together, and one by one when their batch fails', async () => {
    const [first, second] = [await leasedWebhook(), await leasedWebhook()];
    // A webhook whose row is gone (purged meanwhile): its attempt breaks the foreign key.
    const third = { ...(await leasedWebhook()), webhookId: randomUUID() };
    // Observed, not replaced: the statements run against the database.
    const batches = jest.spyOn(h.app.get(DeliveryRepository), 'recordScheduledBatch');
    // The first is written at once; the other two wait for it and go together, and the third's
    // missing webhook fails their batch.
    const results = await Promise.allSettled([
      recorder.record(first, attempt(), delivered),
      recorder.record(second, attempt(), delivered),
      recorder.record(third, attempt(), delivered),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(batches.mock.calls.map(([records]) => records.map((r) => r.job.webhookId))).toEqual([
      [second.webhookId, third.webhookId],
    ]);
    batches.mockRestore();
    expect(results.slice(0, 2).map((r) => (r as PromiseFulfilledResult<boolean>).value)).toEqual([
      true,
      true,
    ]);

    const rows = await h.rows<{ id: string; status: string }>(
      `SELECT id, status FROM webhooks WHERE id = ANY($1::uuid[])`,
      [[first.webhookId, second.webhookId, third.webhookId]],
    );
    const statusOf = (job: DeliveryJob) => rows.find((r) => r.id === job.webhookId)?.status;
    expect([statusOf(first), statusOf(second), statusOf(third)]).toEqual([
      'succeeded',
      'succeeded',
      undefined,
    ]);
  });

  it('fills in an attempt another worker recorded as lost while this one waited past its lease, and delivers', async () => {
    const job = await leasedWebhook();
    const sent = { ...attempt(), id: job.attemptId!, number: 1 };
    // The claim that took the row over found this attempt open and recorded it with no outcome.
    await h.rows(
      `INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, error, duration_ms,
         succeeded, retry_delay_ms, created_at)
       VALUES ($1, $2, 'scheduled', 1, $3, '', $4, 0, false, 10, now())`,
      [job.attemptId, job.webhookId, job.url, LOST_ATTEMPT_ERROR],
    );
    await h.rows(`UPDATE webhooks SET attempt_count = 1, lease_token = gen_random_uuid() WHERE id = $1`, [
      job.webhookId,
    ]);
    await expect(recorder.record(job, sent, delivered)).resolves.toBe(true);
    const attempts = await h.rows(`SELECT * FROM webhook_attempts WHERE webhook_id = $1`, [job.webhookId]);
    expect(attempts).toEqual([
      expect.objectContaining({
        id: job.attemptId,
        number: 1,
        status_code: 200,
        error: null,
        succeeded: true,
      }),
    ]);
    const [row] = await h.rows(`SELECT status, attempt_count FROM webhooks WHERE id = $1`, [job.webhookId]);
    expect(row).toEqual({ status: 'succeeded', attempt_count: 1 });
  });

  it('leaves a webhook whose lease was lost alone after a failed attempt, and says so', async () => {
    const job = await leasedWebhook();
    const stale = { ...job, leaseToken: randomUUID() };
    const failed = { ...attempt(), statusCode: 500, succeeded: false };
    await expect(recorder.record(stale, failed, { status: 'pending', retryDelayMs: 60_000 })).resolves.toBe(
      false,
    );
    const [row] = await h.rows(`SELECT status FROM webhooks WHERE id = $1`, [job.webhookId]);
    expect(row.status).toBe('pending');
  });

  it('delivers a webhook whose success came back after its lease moved on: the receiver has it', async () => {
    // A replica paused past its lease after the receiver's 200; another took the webhook over.
    const [alone, first, second] = [await leasedWebhook(), await leasedWebhook(), await leasedWebhook()];
    const lost = (job: DeliveryJob) => ({ ...job, leaseToken: randomUUID() });
    await expect(recorder.record(lost(alone), attempt(), delivered)).resolves.toBe(true);
    // Two at once go in one batch statement.
    await Promise.all([
      recorder.record(lost(first), attempt(), delivered),
      recorder.record(lost(second), attempt(), delivered),
    ]);
    const rows = await h.rows<{ status: string; sent_at: Date | null; lease_token: string | null }>(
      `SELECT status, sent_at, lease_token FROM webhooks WHERE id = ANY($1::uuid[])`,
      [[alone.webhookId, first.webhookId, second.webhookId]],
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toMatchObject({ status: 'succeeded', lease_token: null });
    expect(rows.every((row) => row.sent_at !== null)).toBe(true);
  });

  it('delivers a webhook another replica failed meanwhile, keeps its attempt count, never rewrites a success', async () => {
    const [alone, first, second, done] = [
      await leasedWebhook(),
      await leasedWebhook(),
      await leasedWebhook(),
      await leasedWebhook(),
    ];
    // Another replica took them over and used up their attempts while this one's success was stalled.
    await h.rows(
      `UPDATE webhooks SET status = 'failed', attempt_count = 5, next_attempt_at = NULL, lease_token = NULL,
         lease_until = NULL, finished_at = now() WHERE id = ANY($1::uuid[])`,
      [[alone.webhookId, first.webhookId, second.webhookId]],
    );
    // The first is written at once, the other two wait for it and go in one batch statement.
    const moved = await Promise.all([
      recorder.record(alone, attempt(), delivered),
      recorder.record(first, attempt(), delivered),
      recorder.record(second, attempt(), delivered),
    ]);
    expect(moved).toEqual([true, true, true]);
    const rows = await h.rows(
      `SELECT status, sent_at, attempt_count FROM webhooks WHERE id = ANY($1::uuid[])`,
      [[alone.webhookId, first.webhookId, second.webhookId]],
    );
    expect(rows).toHaveLength(3);
    for (const row of rows)
      expect(row).toMatchObject({ status: 'succeeded', sent_at: expect.any(Date), attempt_count: 5 });

    await expect(recorder.record(done, attempt(), delivered)).resolves.toBe(true);
    const [before] = await h.rows(`SELECT sent_at FROM webhooks WHERE id = $1`, [done.webhookId]);
    await expect(recorder.record(done, attempt(), delivered)).resolves.toBe(false);
    const [after] = await h.rows(`SELECT sent_at FROM webhooks WHERE id = $1`, [done.webhookId]);
    expect(after.sent_at).toEqual(before.sent_at);
  });

  it("delivers a webhook whose late success and its next lease's failure finish together", async () => {
    // The receiver's 200 came back after the lease ran out; the webhook was claimed again meanwhile
    // and that attempt failed. Both records reach the recorder while another write runs.
    const [other, job] = [await leasedWebhook(), await leasedWebhook()];
    const earlier = { ...job, leaseToken: randomUUID() };
    const failed = {
      ...attempt(),
      number: 2,
      statusCode: 500,
      responseBody: 'down',
      succeeded: false,
      verdict: false,
    };
    const moved = await Promise.all([
      recorder.record(other, attempt(), delivered),
      recorder.record(job, failed, { status: 'pending', retryDelayMs: 120_000 }),
      recorder.record(earlier, attempt(), delivered),
    ]);
    expect(moved).toEqual([true, true, true]);
    const [row] = await h.rows(
      `SELECT status, sent_at, next_attempt_at, attempt_count FROM webhooks WHERE id = $1`,
      [job.webhookId],
    );
    // Delivered: the receiver has it, and nothing sends it again.
    expect(row).toMatchObject({
      status: 'succeeded',
      sent_at: expect.any(Date),
      next_attempt_at: null,
      attempt_count: 2,
    });
    const attempts = await h.rows(
      `SELECT succeeded FROM webhook_attempts WHERE webhook_id = $1 ORDER BY number`,
      [job.webhookId],
    );
    expect(attempts.map((a) => a.succeeded)).toEqual([true, false]);
  });

  it('writes when an endpoint was tried at most once a quarter gap, and forgets endpoints tried long ago', async () => {
    const observations = h.app.get(EndpointObservations);
    const quarter = observationGapMs(h.config) / 4;
    const endpoint = (await h.subscribe({ url: 'http://127.0.0.1:9/quarter' })).id as string;
    const start = Date.now();
    const at = (ms: number) => new Date(start + ms);
    const triedAt = (ms: number) =>
      h.waitForRow(`SELECT tried_at FROM webhook_settings WHERE id = $1`, [endpoint], ([row]) =>
        Boolean(row?.tried_at && row.tried_at.getTime() === start + ms),
      );

    observations.tried([{ settingsId: endpoint, at: at(0) }]);
    await triedAt(0);
    // Tried again within the quarter gap, beside a thousand other endpoints: it is not written again.
    observations.tried([
      { settingsId: endpoint, at: at(quarter / 2) },
      ...Array.from({ length: 1_000 }, () => ({ settingsId: randomUUID(), at: at(quarter / 2) })),
    ]);
    for (let polls = 0; observations.endpointsRemembered < 1_001 && polls < 250; polls += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The thousand and the endpoint (the other tests' endpoint too, unless already a quarter gap old).
    expect(observations.endpointsRemembered).toBeGreaterThanOrEqual(1_001);
    expect(observations.endpointsRemembered).toBeLessThanOrEqual(1_002);
    await triedAt(0);

    // A quarter gap after its last write it is written again, and every other endpoint is forgotten.
    observations.tried([{ settingsId: endpoint, at: at(quarter + quarter / 2) }]);
    await triedAt(quarter + quarter / 2);
    expect(observations.endpointsRemembered).toBe(1);
  });
});
