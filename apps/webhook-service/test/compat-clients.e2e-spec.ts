// The exact requests Paybyrd's public clients send to the webhook service, and what they read back.
// Each case names the client and the file its shape comes from.
import { SUBSCRIBABLE_EVENT_NAMES } from '@byrd/contracts';
import { callService } from '@byrd/platform/testing';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

describe('webhook service as the public clients call it', () => {
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

  const create = (body: Record<string, unknown>) => h.request('POST', '/api/v1/settings', body);

  /**
   * paybyrd/paybyrd-clients-dotnet, src/Paybyrd.Clients.Webhook/Contracts/CreateWebhookSettingsRequest.cs
   * and its tests: every property is serialised, so absent ones arrive as null or "", storeId as a
   * number. The client reads data.id, data.url, data.events, data.paymentMethods and data.credential.*.
   */
  it('takes settings with nulls and empty strings for absent fields, and storeId as a number', async () => {
    const apiKey = await create({
      url: receiver.url,
      credentialType: 'api-key',
      apiKey: null,
      username: '',
      password: '',
      events: null,
      paymentMethods: null,
      storeId: 10,
    });
    expect(apiKey.status).toBe(201);
    expect(apiKey.body.data).toMatchObject({
      id: expect.any(String),
      url: receiver.url,
      events: [],
      paymentMethods: [],
      storeId: '10',
      credential: { type: 'api-key', apiKey: expect.any(String), username: null, password: null },
    });

    const basic = await create({
      url: receiver.url,
      credentialType: null,
      apiKey: '',
      username: 'shop',
      password: 'secret-password',
      events: ['order.paid'],
      paymentMethods: ['card'],
      storeId: null,
    });
    expect(basic.status).toBe(201);
    expect(basic.body.data.credential).toEqual({
      type: 'basic',
      apiKey: null,
      username: 'shop',
      password: 'secret-password',
    });

    const neither = await create({ url: receiver.url, credentialType: '', apiKey: '', username: '', password: '' });
    expect(neither.status).toBe(201);
    expect(neither.body.data.credential.type).toBe('api-key');

    // A real contradiction is still refused, naming the field.
    const contradiction = await create({ url: receiver.url, credentialType: 'api-key', username: 'shop', password: 'x'.repeat(8) });
    expect(contradiction.status).toBe(400);
    expect(contradiction.body.errors.map((e: { field: string }) => e.field)).toContain('username');
  });

  /** src/Paybyrd.Clients.Webhook/ValueObjects/Event.cs: the 55 event names the .NET client knows. */
  it('accepts all 55 event names of the .NET client', async () => {
    expect(SUBSCRIBABLE_EVENT_NAMES).toHaveLength(55);
    const answer = await create({ url: receiver.url, credentialType: 'api-key', events: SUBSCRIBABLE_EVENT_NAMES });
    expect(answer.status).toBe(201);
    expect(answer.body.data.events).toHaveLength(55);
  });

  /** The WooCommerce plugin recreates its webhook with DELETE, `Content-Type: application/json`, no body. */
  it('deletes a setting sent with a JSON content type and no body', async () => {
    const setting = await h.subscribe({ url: receiver.url });
    const response = await fetch(`${h.baseUrl}/api/v1/settings/${setting.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': h.merchant.apiKey, 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    expect((await h.request('GET', `/api/v1/settings/${setting.id}`)).status).toBe(404);
  });

  /**
   * The WooCommerce plugin's webhook endpoint reads getallheaders() case-sensitively:
   * $headers['X-Api-Key']. The name must reach it spelt that way on the wire.
   */
  it('sends X-Api-Key and Authorization with that casing on the wire', async () => {
    await h.subscribe({ url: receiver.url, credentialType: 'api-key' });
    await h.subscribe({ url: receiver.url, credentialType: 'basic' });
    await h.publish('order.paid');
    await receiver.waitFor((r) => r.length === 2);
    const names = receiver.received.flatMap((r) => r.rawHeaders.filter((_, i) => i % 2 === 0));
    expect(names).toContain('X-Api-Key');
    expect(names).toContain('Authorization');
    expect(names).not.toContain('x-api-key');
  });

  /**
   * src/Paybyrd.Clients.Webhook/Contracts/WebhookAttemptResponse.cs: StatusCode is a non-nullable
   * HttpStatusCode, so an attempt that got no answer carries `response: null`, never a null status.
   */
  it('answers an attempt that got no answer with response null, and a real answer with its status', async () => {
    const dead = await h.subscribe({ url: 'http://127.0.0.1:9/hooks', events: ['order.paid'] });
    const live = await h.subscribe({ url: receiver.url, events: ['order.paid'] });
    receiver.answer = () => ({ status: 202, body: 'accepted' });
    const event = await h.publish('order.paid');
    const attemptsOf = async (settingsId: string) => {
      const [webhook] = (await h.webhooksOf(event.id)).filter((w) => w.settings_id === settingsId);
      const answer = await h.request('GET', `/api/v1/webhooks/${webhook.id}/attempts`);
      return answer.body.data as { response: unknown; error: string | null }[];
    };
    await h.waitForRow(
      'SELECT 1 FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id WHERE w.event_id = $1',
      [event.id],
      (rows) => rows.length >= 2,
    );
    const [unanswered] = await attemptsOf(dead.id);
    expect(unanswered.response).toBeNull();
    expect(unanswered.error).toEqual(expect.any(String));
    const [answered] = await attemptsOf(live.id);
    expect(answered.response).toEqual({ statusCode: 202, content: 'accepted' });
  });

  it('ends a webhook at a 4xx without retrying when the setting says retryOn4xx: false', async () => {
    receiver.answer = () => ({ status: 404, body: 'not interested' });
    const noRetry = await h.subscribe({ url: receiver.url, events: ['order.paid'], retryOn4xx: false });
    expect(noRetry.retryOn4xx).toBe(false);
    const event = await h.publish('order.paid');
    await h.waitForRow(`SELECT status FROM webhooks WHERE event_id = $1`, [event.id], (rows) =>
      rows.some((r: { status: string }) => r.status === 'failed'),
    );
    await new Promise((r) => setTimeout(r, 300)); // retries would come every 10 ms here
    expect(receiver.received).toHaveLength(1);
    const [webhook] = await h.webhooksOf(event.id);
    expect(webhook.attempt_count).toBe(1);
    const read = await callService(h.baseUrl, h.merchant.apiKey, 'GET', `/api/v1/settings/${noRetry.id}`);
    expect(read.body.data.retryOn4xx).toBe(false);
  });

  it('still retries a 4xx by default, and a 429 even with retryOn4xx: false', async () => {
    receiver.answer = (request, index) => ({ status: index < 2 ? 404 : 200 });
    await h.subscribe({ url: receiver.url, events: ['order.paid'] });
    const retried = await h.publish('order.paid');
    await h.waitForRow(`SELECT status FROM webhooks WHERE event_id = $1`, [retried.id], (rows) =>
      rows.some((r: { status: string }) => r.status === 'succeeded'),
    );
    expect(receiver.received).toHaveLength(3);

    await h.freshMerchant();
    const limited = await Receiver.start();
    try {
      limited.answer = (request, index) => ({ status: index === 0 ? 429 : 200 });
      await h.subscribe({ url: limited.url, events: ['order.paid'], retryOn4xx: false });
      const event = await h.publish('order.paid');
      await h.waitForRow(`SELECT status FROM webhooks WHERE event_id = $1`, [event.id], (rows) =>
        rows.some((r: { status: string }) => r.status === 'succeeded'),
      );
      expect(limited.received).toHaveLength(2);
    } finally {
      await limited.stop();
    }
  });
});
