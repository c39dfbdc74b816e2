import { randomUUID } from 'node:crypto';
import { callService } from '@byrd/platform/testing';
import { PurgeWebhooks } from '../src/retention/purge-webhooks.usecase.js';
import { ResendWebhooks } from '../src/webhooks/resend-webhooks.usecase.js';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const ATTEMPTS = `SELECT kind FROM webhook_attempts WHERE webhook_id = $1 ORDER BY created_at`;

/**
 * A resend asked with an `idempotency-key` whose answer was lost (the process died after the resend
 * was committed, before the guard stored the answer under the key) is queued once: the merchant's
 * retry with the same key is answered as the first was, and the receiver gets one extra attempt.
 */
describe('resend with an idempotency-key', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start();
  });
  afterAll(() => h?.stop());
  beforeEach(async () => {
    await h.freshMerchant();
    receiver = await Receiver.start();
  });
  afterEach(() => receiver?.stop());

  /** A webhook of a new setting at the receiver, delivered by its first scheduled attempt. */
  async function deliveredWebhook(): Promise<string> {
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const [webhook] = await h.waitForRow<{ id: string }>(
      `SELECT id FROM webhooks WHERE event_id = $1 AND status = 'succeeded'`,
      [event.id],
      (rows) => rows.length === 1,
    );
    return webhook.id;
  }

  /** No resend of the webhook left queued or in flight (each one's row goes when it is recorded). */
  const resendsDone = (webhookId: string) =>
    h.waitForRow(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [webhookId], (rows) => !rows.length);

  it('queues nothing more when retried after the first answer was lost, and answers the same', async () => {
    const webhookId = await deliveredWebhook();
    const unknown = randomUUID();
    const key = `resend-${randomUUID()}`;
    const resend = () =>
      h.request('POST', '/api/v1/webhooks/resend', { ids: [webhookId, unknown] }, { 'idempotency-key': key });

    const first = await resend();
    expect(first).toMatchObject({
      status: 202,
      body: { data: { resent: [webhookId], notFound: [unknown] } },
    });
    // The resend goes out (its row with it) long before a merchant's retry would come.
    await receiver.waitFor((r) => r.length === 2);
    await resendsDone(webhookId);
    // As if the first request died after its commit: its key holds no answer and its lease ran out.
    await h.db.query(
      `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL, lease_owner = NULL,
         lease_until = now() - interval '1 second'
       WHERE merchant_id = $1 AND key = $2`,
      [h.merchant.merchantId, key],
    );

    const retry = await resend();
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    // Time for a second resend to arrive, had one been queued (the poll is 20 ms).
    await new Promise((r) => setTimeout(r, 1_000));
    await resendsDone(webhookId);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect((await h.rows(ATTEMPTS, [webhookId])).map((a) => a.kind)).toEqual(['scheduled', 'resend']);

    // Another body under the key is refused, as for any key (here by the guard, from the key's hash).
    const other = await h.request(
      'POST',
      '/api/v1/webhooks/resend',
      { ids: [webhookId] },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(422);

    // What the key queued is kept as long as the key, then the retention sweep removes it.
    const keptOf = () =>
      h.rows(`SELECT resent FROM webhook_resend_requests WHERE merchant_id = $1 AND idempotency_key = $2`, [
        h.merchant.merchantId,
        key,
      ]);
    expect(await keptOf()).toEqual([{ resent: [webhookId] }]);
    await h.app.get(PurgeWebhooks).execute();
    expect(await keptOf()).toHaveLength(1);
    await h.rows(
      `UPDATE webhook_resend_requests SET created_at = now() - interval '25 hours' WHERE idempotency_key = $1`,
      [key],
    );
    await h.app.get(PurgeWebhooks).execute();
    expect(await keptOf()).toEqual([]);
  });

  it('queues once when requests of one key run at once (the first stalled past its lease)', async () => {
    // Both run only when the first stalled (a paused replica) past its key's lease and the
    // merchant's retry took the key over: the use case itself, four at once.
    const resendWebhooks = h.app.get(ResendWebhooks);
    const merchant = {
      merchantId: h.merchant.merchantId,
      merchantName: 'Resends',
      mode: 'sandbox' as const,
      scopes: [],
    };
    const webhookId = await deliveredWebhook();
    const key = `concurrent-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => resendWebhooks.execute(merchant, { ids: [webhookId] }, key)),
    );
    for (const answer of answers) expect(answer).toEqual({ data: { resent: [webhookId], notFound: [] } });
    await receiver.waitFor((r) => r.length >= 2);
    await new Promise((r) => setTimeout(r, 1_000));
    await resendsDone(webhookId);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect((await h.rows(ATTEMPTS, [webhookId])).map((a) => a.kind)).toEqual(['scheduled', 'resend']);
  });

  it('documents its idempotency-key header once, as optional', async () => {
    const docs = await callService(h.baseUrl, '', 'GET', '/docs/json');
    const parameters = docs.body.paths['/api/v1/webhooks/resend'].post.parameters as { name: string }[];
    expect(parameters.filter((p) => p.name === 'idempotency-key')).toEqual([
      expect.objectContaining({ in: 'header', required: false }),
    ]);
  });
});
