import { randomUUID } from 'node:crypto';
import { callService, startTestApp, type TestMerchant } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { WebhookHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RECEIVER = 'http://127.0.0.1:9/hooks';
/** Low, so a test reaches it in a few requests (the default is 100). */
const CAP = 3;

describe('live webhook settings per merchant are capped (WEBHOOK_SETTINGS_MAX_PER_MERCHANT)', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await WebhookHarness.start({ WEBHOOK_SETTINGS_MAX_PER_MERCHANT: String(CAP) });
  });
  afterAll(() => h?.stop());

  const create = (merchant: TestMerchant, headers: Record<string, string> = {}, url = RECEIVER) =>
    callService(
      h.baseUrl,
      merchant.apiKey,
      'POST',
      '/api/v1/settings',
      { url, credentialType: 'api-key' },
      headers,
    );

  /** The merchant's settings not deleted, as fan-out reads them. */
  const liveSettings = async (merchant: TestMerchant) =>
    (
      await h.rows<{ id: string }>(
        `SELECT id FROM webhook_settings WHERE merchant_id = $1 AND deleted_at IS NULL`,
        [merchant.merchantId],
      )
    ).map((row) => row.id);

  it('refuses a setting past the cap with 422 BYRD205 naming the limit; deleting one frees room', async () => {
    const merchant = await h.freshMerchant();
    // The same URL each time: two settings of one URL are two endpoints, each counted.
    const made: string[] = [];
    for (let i = 0; i < CAP; i++) {
      const answer = await create(merchant);
      expect(answer.status).toBe(201);
      made.push(answer.body.data.id);
    }

    const key = `over-${randomUUID()}`;
    const refused = await create(merchant, { 'idempotency-key': key });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      code: 'BYRD205',
      description: 'Operation rejected',
      message: expect.stringContaining(`at most ${CAP} webhook settings`),
      requestId: expect.stringMatching(GUID),
    });
    expect(refused.body.message).toContain('DELETE /api/v1/settings/{id}');
    // Nothing to wait for: only the merchant's own delete makes room.
    expect(refused.headers.get('retry-after')).toBeNull();
    expect((await liveSettings(merchant)).sort()).toEqual([...made].sort());
    const listed = await callService(h.baseUrl, merchant.apiKey, 'GET', '/api/v1/settings');
    expect(listed.body.data).toHaveLength(CAP);

    const deleted = await callService(h.baseUrl, merchant.apiKey, 'DELETE', `/api/v1/settings/${made[0]}`);
    expect(deleted.status).toBe(200);
    // The refusal was not kept under its key: the same request subscribes once there is room.
    const again = await create(merchant, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(await liveSettings(merchant)).toHaveLength(CAP);
    expect((await create(merchant)).status).toBe(422);

    // The document describes the refusal (and the harness checks every answer against it).
    const docs = await callService(h.baseUrl, '', 'GET', '/docs/json');
    expect(docs.body.paths['/api/v1/settings'].post.responses['422'].description).toContain('BYRD205');
  });

  it(`leaves exactly ${CAP} live settings when ${CAP + 5} creates run at once from none`, async () => {
    for (let round = 0; round < 3; round++) {
      const merchant = await h.freshMerchant();
      const answers = await Promise.all(
        Array.from({ length: CAP + 5 }, (_, i) => create(merchant, {}, `${RECEIVER}/race-${i}`)),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([...Array(CAP).fill(201), ...Array(5).fill(422)]);
      const live = await liveSettings(merchant);
      expect(live).toHaveLength(CAP);
      const created = answers.filter((answer) => answer.status === 201).map((answer) => answer.body.data.id);
      expect(created.sort()).toEqual(live.sort());
    }
  });

  it(`leaves exactly ${CAP} live settings when creates race on two replicas, round after round`, async () => {
    // A second replica on the same database: the cap must hold across processes, not only requests.
    const { app, url } = await startTestApp(AppModule.forRoot(h.config), SERVICE_NAME);
    try {
      for (let round = 0; round < 10; round++) {
        const merchant = await h.freshMerchant();
        // Some settings exist already: the race is for the last free places.
        for (let i = 0; i < CAP - 1; i++) expect((await create(merchant)).status).toBe(201);
        const answers = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            callService(i % 2 === 0 ? h.baseUrl : url, merchant.apiKey, 'POST', '/api/v1/settings', {
              url: `${RECEIVER}/replica-${i}`,
              credentialType: 'basic',
            }),
          ),
        );
        expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(5).fill(422)]);
        expect(await liveSettings(merchant)).toHaveLength(CAP);
      }
    } finally {
      await app.close();
    }
  });

  it("does not count another merchant's settings", async () => {
    const full = await h.freshMerchant();
    for (let i = 0; i < CAP; i++) expect((await create(full)).status).toBe(201);
    expect((await create(full)).status).toBe(422);

    const other = await h.freshMerchant();
    for (let i = 0; i < CAP; i++) expect((await create(other)).status).toBe(201);
    expect(await liveSettings(other)).toHaveLength(CAP);
    expect((await create(other)).status).toBe(422);
    expect(await liveSettings(full)).toHaveLength(CAP);
  });

  it('answers a retried or replayed create at the cap with the setting its key made', async () => {
    const merchant = await h.freshMerchant();
    const keys = Array.from({ length: CAP }, () => `cap-${randomUUID()}`);
    const firsts = [];
    for (const key of keys) {
      const answer = await create(merchant, { 'idempotency-key': key });
      expect(answer.status).toBe(201);
      firsts.push(answer.body);
    }
    expect((await create(merchant, { 'idempotency-key': `cap-${randomUUID()}` })).status).toBe(422);

    // As if the last request died after its commit: its key holds no answer and its lease ran out.
    const lost = keys[CAP - 1];
    const forgotten = await h.db.query(
      `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL,
         lease_until = now() - interval '1 second' WHERE merchant_id = $1 AND key = $2`,
      [merchant.merchantId, lost],
    );
    expect(forgotten.rowCount).toBe(1);
    const retry = await create(merchant, { 'idempotency-key': lost });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(firsts[CAP - 1]); // its credential and signing secret too

    // A replay of an answered key runs the use case again too (its answer holds secrets).
    const replay = await create(merchant, { 'idempotency-key': keys[0] });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(firsts[0]);

    expect(await liveSettings(merchant)).toHaveLength(CAP);
  });
});
