import { randomUUID } from 'node:crypto';
import { callService } from '@byrd/platform/testing';
import { CreateSettings } from '../src/settings/settings.usecases.js';
import { WebhookHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RECEIVER = 'http://127.0.0.1:9/hooks';

describe('webhook settings API', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await WebhookHarness.start();
  });
  afterAll(() => h?.stop());

  it('creates an api-key setting with a generated key and a whsec_ signing secret, then reads, lists and deletes it', async () => {
    const created = await h.request('POST', '/api/v1/settings', {
      url: RECEIVER,
      credentialType: 'api-key',
      events: ['order.paid', 'transaction.payment.success'],
      paymentMethods: ['card', 'mbway'],
    });
    expect(created.status).toBe(201);
    const data = created.body.data;
    expect(data).toMatchObject({
      url: RECEIVER,
      events: ['order.paid', 'transaction.payment.success'],
      paymentMethods: ['card', 'mbway'],
      credential: { type: 'api-key', username: null, password: null },
    });
    expect(data.id).toMatch(GUID);
    expect(data.credential.apiKey).toMatch(GUID);
    expect(data.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const read = await h.request('GET', `/api/v1/settings/${data.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id: data.id, credential: data.credential });
    expect(read.body.data.signingSecret).toBeUndefined();

    const list = await h.request('GET', '/api/v1/settings');
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(data.id);

    const deleted = await h.request('DELETE', `/api/v1/settings/${data.id}`);
    expect(deleted).toMatchObject({ status: 200, body: { data: { id: data.id, deleted: true } } });
    expect((await h.request('GET', `/api/v1/settings/${data.id}`)).status).toBe(404);
    expect((await h.request('DELETE', `/api/v1/settings/${data.id}`)).status).toBe(404);
    const after = await h.request('GET', '/api/v1/settings');
    expect(after.body.data.map((s: { id: string }) => s.id)).not.toContain(data.id);
  });

  it('answers a retry with the setting its key made when the first answer was never stored', async () => {
    const key = `settings-${Date.now()}`;
    const url = `${RECEIVER}/once-${Date.now()}`;
    const create = (body: Record<string, unknown>) =>
      h.request('POST', '/api/v1/settings', body, { 'idempotency-key': key });
    // As if the first request died after its commit: its key holds no answer and its lease ran out.
    const forgetAnswer = () =>
      h.db.query(
        `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL,
           lease_until = now() - interval '1 second' WHERE key = $1`,
        [key],
      );
    const first = await create({ url, credentialType: 'api-key' });
    expect(first.status).toBe(201);
    await forgetAnswer();

    const retry = await create({ url, credentialType: 'api-key' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toEqual(first.body.data); // its credential and signing secret too
    const list = await h.request('GET', '/api/v1/settings');
    expect(list.body.data.filter((s: { url: string }) => s.url === url)).toHaveLength(1);

    await forgetAnswer();
    const other = await create({ url: `${url}/other`, credentialType: 'api-key' });
    expect(other.status).toBe(422);
  });

  it("keeps no copy of a new setting's secrets under its idempotency-key, and replays it from the setting", async () => {
    const key = `secrets-${randomUUID()}`;
    const url = `${RECEIVER}/secrets-${randomUUID()}`;
    const create = () =>
      h.request('POST', '/api/v1/settings', { url, credentialType: 'basic' }, { 'idempotency-key': key });
    const first = await create();
    expect(first.status).toBe(201);
    const { signingSecret, credential } = first.body.data;
    const stored = await h.db.query<{ response_status: number; response_body: unknown }>(
      `SELECT response_status, response_body FROM idempotency_keys WHERE key = $1`,
      [key],
    );
    expect(stored.rows).toEqual([{ response_status: 201, response_body: null }]);
    const storedText = JSON.stringify(stored.rows);
    expect(storedText).not.toContain(signingSecret);
    expect(storedText).not.toContain(credential.password);

    const replayed = await create();
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(first.body);

    // Deleted since: the replay still answers it, and subscribes nothing new.
    await h.request('DELETE', `/api/v1/settings/${first.body.data.id}`);
    expect((await create()).body).toEqual(first.body);
    const { rows } = await h.db.query(`SELECT id FROM webhook_settings WHERE url = $1`, [url]);
    expect(rows).toHaveLength(1);
  });

  it('subscribes once when requests of one key run at once (the first stalled past its lease)', async () => {
    // The key's lease lets one request run at a time; both run when the first stalled (a paused
    // replica) past it and the merchant's retry took the key over: the use case itself, four at once.
    const create = h.app.get(CreateSettings);
    const merchant = {
      merchantId: h.merchant.merchantId,
      merchantName: 'Settings',
      mode: 'sandbox' as const,
      scopes: [],
    };
    for (let round = 0; round < 5; round++) {
      const key = `concurrent-${round}-${Date.now()}`;
      const url = `${RECEIVER}/concurrent-${round}-${Date.now()}`;
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => create.execute(merchant, { url, credentialType: 'api-key' }, key)),
      );
      const { rows } = await h.db.query<{ id: string }>(`SELECT id FROM webhook_settings WHERE url = $1`, [
        url,
      ]);
      expect(rows).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.data.id))).toEqual(new Set([rows[0].id]));
      expect(new Set(answers.map((answer) => answer.data.credential.apiKey)).size).toBe(1);
    }
  });

  it('generates basic credentials, or keeps the ones sent; empty filters mean all', async () => {
    const generated = await h.subscribe({ url: RECEIVER, credentialType: 'basic' });
    expect(generated.credential).toMatchObject({ type: 'basic', apiKey: null });
    expect(generated.credential.username).toMatch(/^byrd-[0-9a-f]{12}$/);
    expect(generated.credential.password.length).toBeGreaterThanOrEqual(32);
    expect(generated).toMatchObject({ events: [], paymentMethods: [] });

    const own = await h.subscribe({
      url: RECEIVER,
      credentialType: 'basic',
      username: 'shop',
      password: 'correct horse',
    });
    expect(own.credential).toEqual({
      type: 'basic',
      apiKey: null,
      username: 'shop',
      password: 'correct horse',
    });
    const key = await h.subscribe({ url: RECEIVER, apiKey: 'my-own-key-123' });
    expect(key.credential.apiKey).toBe('my-own-key-123');
  });

  it('stores credentials and the signing secret sealed: the database alone reveals none of them', async () => {
    const basic = await h.subscribe({
      url: RECEIVER,
      credentialType: 'basic',
      username: 'shop',
      password: 'correct horse battery',
    });
    const key = await h.subscribe({ url: RECEIVER, apiKey: 'my-own-key-456' });
    const stored = await h.rows<{
      id: string;
      api_key: string | null;
      password: string | null;
      signing_secret: string;
    }>('SELECT id, api_key, password, signing_secret FROM webhook_settings WHERE id = ANY($1::uuid[])', [
      [basic.id, key.id],
    ]);
    const dump = JSON.stringify(stored);
    for (const secret of [
      'correct horse battery',
      'my-own-key-456',
      basic.signingSecret,
      key.signingSecret,
    ]) {
      expect(dump).not.toContain(secret);
    }
    for (const row of stored) expect(row.signing_secret).toMatch(/^v1:[0-9a-f]{8}:/);
    // The API still answers them in clear to their merchant.
    const read = await h.request('GET', `/api/v1/settings/${basic.id}`);
    expect(read.body.data.credential).toMatchObject({ username: 'shop', password: 'correct horse battery' });

    // A sealed value copied onto another setting does not open there: the setting answers without it.
    await h.rows('UPDATE webhook_settings SET password = $1 WHERE id = $2', [
      stored.find((r) => r.id === basic.id)!.password,
      key.id,
    ]);
    const moved = await h.request('GET', `/api/v1/settings/${key.id}`);
    expect(moved.status).toBe(200);
    expect(moved.body.data.credential).toEqual({
      type: 'api-key',
      apiKey: null,
      username: null,
      password: null,
      unavailable: expect.stringContaining('cannot be read'),
    });
    await h.rows('UPDATE webhook_settings SET password = NULL WHERE id = $1', [key.id]);
  });

  it('refuses unknown events, payment methods and credential types with 400 BYRD900 naming the field', async () => {
    const bad = await h.request('POST', '/api/v1/settings', {
      url: RECEIVER,
      credentialType: 'oauth',
      events: ['order.paid', 'order.shipped'],
      paymentMethods: ['card', 'bitcoin'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
    const fields = bad.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['credentialType', 'events', 'paymentMethods']));
    const events = bad.body.errors.find((e: { field: string }) => e.field === 'events');
    expect(events.message).toContain('must be one of: order.created');

    const noUrl = await h.request('POST', '/api/v1/settings', { credentialType: 'api-key' });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.errors.map((e: { field: string }) => e.field)).toContain('url');

    const halfBasic = await h.request('POST', '/api/v1/settings', {
      url: RECEIVER,
      credentialType: 'basic',
      username: 'only-me',
    });
    expect(halfBasic.status).toBe(400);
    expect(halfBasic.body.errors.map((e: { field: string }) => e.field)).toContain('password');
  });

  it('refuses credentials no delivery could carry (every attempt would fail) with 400 BYRD900 naming the field', async () => {
    const settings = (credentials: Record<string, string>) =>
      h.request('POST', '/api/v1/settings', { url: RECEIVER, ...credentials });
    // Sent as the X-Api-Key header: a line break or a control character is refused by the HTTP
    // client, text beyond ASCII by receivers, and spaces around it are not part of it on arrival.
    for (const apiKey of [
      'key-1234\r\nX-Injected: 1',
      'key-12345\n',
      'key\u0007-12345',
      'clé-secrète-1234',
      'key-\u2603-12345',
      ' key-12345',
      'key-12345\t',
    ]) {
      const answer = await settings({ credentialType: 'api-key', apiKey });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
      expect(answer.body.errors).toEqual([{ field: 'apiKey', message: expect.stringContaining('ASCII') }]);
    }
    // Basic authentication splits user and password at the first colon.
    const colon = await settings({ credentialType: 'basic', username: 'shop:1', password: 'password-1' });
    expect(colon.status).toBe(400);
    expect(colon.body.errors).toEqual([{ field: 'username', message: expect.stringContaining('colon') }]);

    // What a header carries is still taken; basic credentials travel base64-encoded, any text.
    const spaced = await settings({ credentialType: 'api-key', apiKey: 'Key with spaces_!#$%&*+-.^`|~1' });
    expect(spaced.status).toBe(201);
    const basic = await settings({
      credentialType: 'basic',
      username: 'Jörg Shop',
      password: 'pässwörd:1 \u2603',
    });
    expect(basic.status).toBe(201);
  });

  it.each([
    ['a private network address', 'http://10.0.0.7/hooks'],
    ['a private network address', 'http://192.168.1.20:8080/hooks'],
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['a carrier-grade NAT address', 'http://100.64.0.1/'],
    ['an unspecified address', 'http://0.0.0.0:8080/'],
    ['a loopback address', 'http://[::1]:8080/'],
    ['a loopback address', 'http://[::ffff:127.0.0.1]:8080/'],
    ['a private (unique local) address', 'http://[fd00::1]/'],
    ['a link-local address', 'http://[fe80::1]/'],
    ['a multicast address', 'http://224.0.0.1/'],
    ['a loopback address', 'http://localhost:8080/hooks'],
    ['a loopback address', 'http://127.0.0.2/hooks'],
  ])('refuses a receiver on %s (%s) with 400 BYRD900 on url', async (why, url) => {
    const answer = await h.request('POST', '/api/v1/settings', { url, credentialType: 'api-key' });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('BYRD900');
    expect(answer.body.errors).toEqual([{ field: 'url', message: expect.stringContaining(why) }]);
  });

  it('refuses a host that does not resolve, credentials in the URL, and other schemes', async () => {
    const nowhere = await h.request('POST', '/api/v1/settings', {
      url: 'https://no-such-host.invalid/hooks',
      credentialType: 'api-key',
    });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.errors[0]).toEqual({
      field: 'url',
      message: expect.stringContaining('does not resolve'),
    });

    const userinfo = await h.request('POST', '/api/v1/settings', {
      url: 'http://user:secret@127.0.0.1/hooks',
      credentialType: 'api-key',
    });
    expect(userinfo.status).toBe(400);
    const ftp = await h.request('POST', '/api/v1/settings', {
      url: 'ftp://127.0.0.1/',
      credentialType: 'api-key',
    });
    expect(ftp.status).toBe(400);
    expect(ftp.body.errors[0].field).toBe('url');
  });

  it('requires https for a live merchant', async () => {
    const live = await h.env.createMerchant('Live Shop', 'live');
    const plain = await callService(h.baseUrl, live.apiKey, 'POST', '/api/v1/settings', {
      url: 'http://127.0.0.1:9/hooks',
      credentialType: 'api-key',
    });
    expect(plain.status).toBe(400);
    expect(plain.body.errors).toEqual([{ field: 'url', message: 'url must use https for a live merchant' }]);
    const tls = await callService(h.baseUrl, live.apiKey, 'POST', '/api/v1/settings', {
      url: 'https://127.0.0.1:9/hooks',
      credentialType: 'api-key',
    });
    expect(tls.status).toBe(201);
  });

  it("answers 404 BYRD901 for another merchant's setting, and 401 without a key", async () => {
    const mine = await h.subscribe({ url: RECEIVER });
    const other = await h.env.createMerchant('Other Shop');
    const foreign = await callService(h.baseUrl, other.apiKey, 'GET', `/api/v1/settings/${mine.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('BYRD901');
    expect((await callService(h.baseUrl, other.apiKey, 'DELETE', `/api/v1/settings/${mine.id}`)).status).toBe(
      404,
    );
    const theirs = await callService(h.baseUrl, other.apiKey, 'GET', '/api/v1/settings');
    expect(theirs.body).toEqual({ data: [] });
    expect((await h.request('GET', `/api/v1/settings/${randomUUID()}`)).status).toBe(404);
    expect((await h.request('GET', '/api/v1/settings/not-a-guid')).status).toBe(404);
    const anonymous = await callService(h.baseUrl, '', 'GET', '/api/v1/settings');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('BYRD401');
  });

  it('describes its endpoints in OpenAPI at /docs and serves Prometheus metrics without a key', async () => {
    const docs = await callService(h.baseUrl, '', 'GET', '/docs/json');
    expect(docs.status).toBe(200);
    const paths = Object.keys(docs.body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/settings',
        '/api/v1/settings/{id}',
        '/api/v1/webhooks',
        '/api/v1/webhooks/{webhookId}/attempts',
        '/api/v1/webhooks/resend',
      ]),
    );
    expect(paths).not.toContain('/metrics');
    expect(docs.body.components.schemas.CreateWebhookSettingsRequest.properties).toHaveProperty(
      'paymentMethods',
    );

    const metrics = await callService(h.baseUrl, '', 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    for (const name of [
      'webhook_deliveries_total',
      'webhook_attempts_total',
      'webhook_due_queue_depth',
      'webhook_delivery_latency_seconds',
      'webhook_attempt_duration_seconds',
    ])
      expect(metrics.body).toContain(`# TYPE ${name}`);
  });
});

describe('webhook URLs with private networks open (development)', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,169.254.169.254,fd00::/8',
    });
  });
  afterAll(() => h?.stop());

  it('still refuses every cloud metadata address, even one the allow-list names', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:169.254.169.254]/',
      'http://100.100.100.200/',
    ]) {
      const answer = await h.request('POST', '/api/v1/settings', { url, credentialType: 'api-key' });
      expect([url, answer.status]).toEqual([url, 400]);
      expect(answer.body.errors[0]).toEqual({ field: 'url', message: expect.stringContaining('metadata') });
    }
    // 169.254.169.254 spelt as one decimal number is not taken as a URL at all.
    const decimal = await h.request('POST', '/api/v1/settings', {
      url: 'http://2852039166/',
      credentialType: 'api-key',
    });
    expect(decimal.status).toBe(400);
    const lan = await h.request('POST', '/api/v1/settings', {
      url: 'http://10.0.0.8/hooks',
      credentialType: 'api-key',
    });
    expect(lan.status).toBe(201);
  });
});
