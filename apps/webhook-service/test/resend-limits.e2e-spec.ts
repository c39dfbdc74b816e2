import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { callService, startTestApp } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { WebhookHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RECEIVER = 'http://127.0.0.1:9/hooks';
/** Low, so a test reaches it in a few requests (the default is 1 000). */
const CAP = 5;

/**
 * Resends are each a signed POST the platform makes to a URL the merchant names: a webhook has one
 * resend to an address waiting at most, and a merchant at most WEBHOOK_RESENDS_MAX_PER_MERCHANT, on
 * every replica at once. Nothing is delivered here, so queued resends stay queued as written.
 */
describe('resends are bounded (one per webhook and address, WEBHOOK_RESENDS_MAX_PER_MERCHANT per merchant)', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_DELIVERY_ENABLED: 'false',
      WEBHOOK_RESENDS_MAX_PER_MERCHANT: String(CAP),
    });
  });
  afterAll(() => h?.stop());
  beforeEach(() => h.freshMerchant());

  /** `n` delivered webhooks of a new setting of the current merchant. */
  async function delivered(n: number, url = RECEIVER): Promise<string[]> {
    const settings = await h.subscribe({ url });
    const rows = await h.rows<{ id: string }>(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, attempt_count, created_at, sent_at, finished_at)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}', now(),
         'succeeded', 1, now(), now(), now()
       FROM generate_series(1, $3::int)
       RETURNING id`,
      [h.merchant.merchantId, settings.id, n],
    );
    return rows.map((row) => row.id).sort();
  }

  const resend = (ids: string[], extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    h.request('POST', '/api/v1/webhooks/resend', { ids, ...extra }, headers);

  /** The resends queued for `ids`, as (webhook, url) pairs. */
  const queuedFor = async (ids: string[]) =>
    (
      await h.rows<{ webhook_id: string; url: string | null }>(
        `SELECT webhook_id, url FROM webhook_resends WHERE webhook_id = ANY ($1) ORDER BY webhook_id, url`,
        [ids],
      )
    ).map((row) => [row.webhook_id, row.url]);

  it('queues one resend per webhook and address: a request repeated while it waits is answered the same and sends nothing more', async () => {
    const [webhook] = await delivered(1);
    for (let i = 0; i < 3; i++)
      expect(await resend([webhook])).toMatchObject({
        status: 202,
        body: { data: { resent: [webhook], notFound: [] } },
      });
    // The setting's own URL named explicitly is the same address.
    expect((await resend([webhook], { url: RECEIVER })).body.data.resent).toEqual([webhook]);
    expect(await queuedFor([webhook])).toEqual([[webhook, null]]);

    // Another address is another resend, once.
    const other = 'http://127.0.0.1:9/other';
    for (let i = 0; i < 2; i++) expect((await resend([webhook], { url: other })).status).toBe(202);
    expect(await queuedFor([webhook])).toEqual([
      [webhook, other],
      [webhook, null],
    ]);

    // Once its resend has gone (its row with it), the next request queues another.
    await h.rows(`DELETE FROM webhook_resends WHERE webhook_id = $1 AND url IS NULL`, [webhook]);
    expect((await resend([webhook])).status).toBe(202);
    expect(await queuedFor([webhook])).toEqual([
      [webhook, other],
      [webhook, null],
    ]);
  });

  it(`refuses a request that would queue more than ${CAP} resends of the merchant, whole, with 429 BYRD206`, async () => {
    const ids = await delivered(CAP + 2);
    expect((await resend(ids.slice(0, 4))).status).toBe(202);

    // Two already queued and two more would make 6: refused, nothing of it queued.
    const key = `over-${randomUUID()}`;
    const refused = await resend(ids.slice(2, 6), {}, { 'idempotency-key': key });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'BYRD206',
      description: 'Operation blocked by velocity',
      message: expect.stringContaining(`At most ${CAP} resends`),
      requestId: expect.stringMatching(GUID),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await queuedFor(ids)).map(([id]) => id)).toEqual(ids.slice(0, 4));

    // Up to the cap is fine; at it, repeating what is queued still answers (it adds nothing).
    expect((await resend([ids[4]])).status).toBe(202);
    expect(await resend(ids.slice(0, 5))).toMatchObject({
      status: 202,
      body: { data: { resent: ids.slice(0, 5), notFound: [] } },
    });
    expect((await resend([ids[5]])).status).toBe(429);
    expect(await queuedFor(ids)).toHaveLength(CAP);

    // Another merchant's resends do not count.
    const first = h.merchant;
    await h.freshMerchant();
    expect((await resend(await delivered(1))).status).toBe(202);

    // The refusal was not kept under its key: once resends have gone out, the same request queues.
    await h.rows(`DELETE FROM webhook_resends WHERE webhook_id = ANY ($1)`, [ids.slice(0, 3)]);
    const retried = await callService(
      h.baseUrl,
      first.apiKey,
      'POST',
      '/api/v1/webhooks/resend',
      { ids: ids.slice(2, 6) },
      { 'idempotency-key': key },
    );
    expect(retried).toMatchObject({ status: 202, body: { data: { resent: ids.slice(2, 6), notFound: [] } } });
    expect((await queuedFor(ids)).map(([id]) => id)).toEqual(ids.slice(2, 6));
  });

  describe('on two replicas at once', () => {
    let second: { app: NestFastifyApplication; url: string };

    beforeAll(async () => {
      second = await startTestApp(AppModule.forRoot(h.config), SERVICE_NAME);
    });
    afterAll(() => second?.app.close());

    /** Request `i` goes to one replica or the other. */
    const onReplica = (i: number, ids: string[]) =>
      callService(i % 2 ? second.url : h.baseUrl, h.merchant.apiKey, 'POST', '/api/v1/webhooks/resend', {
        ids,
      });

    it(`never queues past ${CAP}, and every resend answered as queued is queued`, async () => {
      for (let round = 0; round < 3; round++) {
        await h.freshMerchant();
        const ids = await delivered(16);
        // Eight requests of two webhooks each, none over the cap alone, all at once.
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) => onReplica(i, ids.slice(2 * i, 2 * i + 2))),
        );
        const statuses = answers.map((a) => a.status);
        expect(statuses.filter((s) => s !== 202 && s !== 429)).toEqual([]);
        const answeredQueued = answers.flatMap((a) => (a.status === 202 ? a.body.data.resent : [])).sort();
        const queued = (await queuedFor(ids)).map(([id]) => id);
        expect(queued.length).toBeLessThanOrEqual(CAP);
        expect(queued).toEqual(answeredQueued);
        expect(statuses).toContain(429);
      }
    });

    it('queues one resend when the same webhook is asked for on both replicas at once', async () => {
      for (let round = 0; round < 3; round++) {
        const [webhook] = await delivered(1);
        const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => onReplica(i, [webhook])));
        for (const answer of answers)
          expect(answer).toMatchObject({ status: 202, body: { data: { resent: [webhook], notFound: [] } } });
        expect(await queuedFor([webhook])).toEqual([[webhook, null]]);
        await h.rows(`DELETE FROM webhook_resends WHERE webhook_id = $1`, [webhook]);
      }
    });
  });

  it('documents the 429 of the resend', async () => {
    const docs = await callService(h.baseUrl, '', 'GET', '/docs/json');
    const responses = docs.body.paths['/api/v1/webhooks/resend'].post.responses;
    expect(responses['429'].description).toContain('BYRD206');
  });
});
