import { randomBytes, randomUUID } from 'node:crypto';
import { SettingsSecrets } from '../src/secrets/settings-secrets.js';
import { publishEvent, WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

/** A key no replica lists any more: what it sealed, the service cannot open. */
const removedKey = new SettingsSecrets({ WEBHOOK_SECRETS_KEYS: randomBytes(32).toString('base64') });

/** The setting's secrets as if sealed under a key an operator then removed from WEBHOOK_SECRETS_KEYS. */
async function sealUnderRemovedKey(h: WebhookHarness, id: string): Promise<void> {
  const sealed = removedKey.sealRow({
    id,
    apiKey: null,
    password: 'gone-password',
    signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
  });
  await h.rows(`UPDATE webhook_settings SET password = $2, signing_secret = $3 WHERE id = $1`, [
    id,
    sealed.password,
    sealed.signingSecret,
  ]);
}

describe('settings whose secrets no configured key opens (a key removed before re-sealing)', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start();
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  const metricsText = async () => (await fetch(`${h.baseUrl}/metrics`)).text();
  const unsentCount = async () =>
    Number(/^webhook_attempts_unsent_total\{reason="secrets"\} (\d+)/m.exec(await metricsText())?.[1] ?? 0);

  it('lists and reads them with the credential marked unavailable, and still answers the others in full', async () => {
    await h.freshMerchant();
    const good = await h.subscribe({ url: `${receiver.url}?good` });
    const key = `broken-${randomUUID()}`;
    const created = await h.request(
      'POST',
      '/api/v1/settings',
      { url: `${receiver.url}?broken`, credentialType: 'basic', username: 'shop', password: 'secret-pw' },
      { 'idempotency-key': key },
    );
    expect(created.status).toBe(201);
    const broken = created.body.data;
    await sealUnderRemovedKey(h, broken.id);

    const listed = await h.request('GET', '/api/v1/settings');
    expect(listed.status).toBe(200);
    const byId = new Map(listed.body.data.map((s: { id: string }) => [s.id, s]));
    expect(byId.get(good.id)).toMatchObject({ credential: good.credential });
    expect(good.credential.unavailable).toBeUndefined();
    const unavailable = {
      id: broken.id,
      url: `${receiver.url}?broken`,
      credential: {
        type: 'basic',
        apiKey: null,
        username: 'shop',
        password: null,
        unavailable: expect.stringContaining('its webhooks are not sent'),
      },
    };
    expect(byId.get(broken.id)).toMatchObject(unavailable);

    const read = await h.request('GET', `/api/v1/settings/${broken.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject(unavailable);
    expect(read.body.data).not.toHaveProperty('signingSecret');

    // A replay of its create answers the setting, without the secret it no longer has.
    const replay = await h.request(
      'POST',
      '/api/v1/settings',
      { url: `${receiver.url}?broken`, credentialType: 'basic', username: 'shop', password: 'secret-pw' },
      { 'idempotency-key': key },
    );
    expect(replay.status).toBe(201);
    expect(replay.body.data).toMatchObject(unavailable);
    expect(replay.body.data).not.toHaveProperty('signingSecret');
  });

  it("holds its deliveries loudly (metric), unsent and unrecorded, and delivers the other settings' and merchants' webhooks", async () => {
    const before = await unsentCount();
    const other = await h.env.createMerchant(`Other ${randomUUID().slice(0, 6)}`);
    await h.subscribe({ url: `${receiver.url}?other` }, other.apiKey);
    const listed = (await h.request('GET', '/api/v1/settings')).body.data as { id: string; url: string }[];
    const broken = listed.find((s) => s.url.endsWith('?broken'))!;

    const mine = await h.publish('order.paid', 'card');
    const theirs = await publishEvent(h.env, other.merchantId, 'order.paid', 'card');
    await receiver.waitFor(
      (r) =>
        r.some((x) => x.path.endsWith('?good') && x.json?.content.orderId === mine.data.orderId) &&
        r.some((x) => x.path.endsWith('?other') && x.json?.content.orderId === theirs.data.orderId),
    );
    const deadline = Date.now() + 10_000;
    while ((await unsentCount()) === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(await unsentCount()).toBeGreaterThan(before);
    expect(receiver.received.filter((r) => r.path.endsWith('?broken'))).toEqual([]);

    // Not an attempt: it waits for its key, none of its attempts used (key-removed-delivery.e2e-spec.ts).
    const [webhook] = (await h.webhooksOf(mine.id)).filter((w) => w.settings_id === broken.id);
    expect(webhook).toMatchObject({ status: 'pending', attempt_count: 0 });
    const attempts = await h.request('GET', `/api/v1/webhooks/${webhook.id}/attempts`);
    expect(attempts.status).toBe(200);
    expect(attempts.body.data).toEqual([]);
    // An attempt made while its key was listed still reads, the setting's credential marked unavailable.
    await h.rows(
      `INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, status_code, response_body,
         error, duration_ms, succeeded, retry_delay_ms, created_at)
       VALUES (gen_random_uuid(), $1, 'resend', NULL, $2, '{}', 500, 'down', NULL, 5, false, NULL, now())`,
      [webhook.id, `${receiver.url}?broken`],
    );
    const earlier = await h.request('GET', `/api/v1/webhooks/${webhook.id}/attempts`);
    expect(earlier.status).toBe(200);
    expect(earlier.body.data[0]).toMatchObject({
      succeeded: false,
      settings: { credential: { type: 'basic', password: null, unavailable: expect.any(String) } },
    });

    // The merchant can still unsubscribe it.
    expect((await h.request('DELETE', `/api/v1/settings/${broken.id}`)).status).toBe(200);
  });
});
