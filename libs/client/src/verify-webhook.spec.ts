import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError } from './errors.js';
import { verifyWebhook } from './verify-webhook.js';

// Signed with the library the webhook service itself signs with, so the two cannot drift apart.
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ id: randomUUID(), event: 'order.paid', content: { amount: '25.00' } });
const now = new Date('2026-11-25T12:00:00Z');

function signedHeaders(at = now, payload = body, id = randomUUID()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1_000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
    'X-Api-Key': 'the-settings-api-key',
  };
}

const rejects = (options: Parameters<typeof verifyWebhook>[0]) =>
  expect(() => verifyWebhook(options)).toThrow(WebhookVerificationError);

describe('verifyWebhook', () => {
  it('accepts what the webhook service signs, from a string, bytes or fetch Headers', () => {
    const headers = signedHeaders();
    expect(verifyWebhook({ body, headers, signingSecret: secret, now })).toEqual(JSON.parse(body));
    expect(
      verifyWebhook({ body: Buffer.from(body), headers: new Headers(headers), signingSecret: secret, now })
        .event,
    ).toBe('order.paid');
  });

  it('refuses a changed body, another secret, a missing header or an unknown signature version', () => {
    const headers = signedHeaders();
    rejects({ body: body.replace('25.00', '2.50'), headers, signingSecret: secret, now });
    rejects({ body, headers, signingSecret: `whsec_${randomBytes(32).toString('base64')}`, now });
    rejects({
      body,
      headers: { ...headers, 'webhook-signature': undefined as never },
      signingSecret: secret,
      now,
    });
    rejects({
      body,
      headers: { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') },
      signingSecret: secret,
      now,
    });
  });

  it('accepts any one matching signature of several (secret rotation)', () => {
    const headers = signedHeaders();
    const other = `v1,${randomBytes(32).toString('base64')}`;
    const rotating = { ...headers, 'webhook-signature': `${other} ${headers['webhook-signature']}` };
    expect(verifyWebhook({ body, headers: rotating, signingSecret: secret, now }).event).toBe('order.paid');
  });

  it('refuses a replay older (or newer) than the tolerance', () => {
    const old = signedHeaders(new Date(now.getTime() - 301_000));
    rejects({ body, headers: old, signingSecret: secret, now });
    expect(
      verifyWebhook({ body, headers: old, signingSecret: secret, now, toleranceSeconds: 600 }).event,
    ).toBe('order.paid');
    rejects({ body, headers: signedHeaders(new Date(now.getTime() + 301_000)), signingSecret: secret, now });
  });

  it('checks the API key or the basic credentials of the setting', () => {
    const headers = signedHeaders();
    expect(verifyWebhook({ body, headers, credential: { apiKey: 'the-settings-api-key' } }).event).toBe(
      'order.paid',
    );
    rejects({ body, headers, credential: { apiKey: 'another-key' } });

    const basic = { authorization: `Basic ${Buffer.from('byrd-shop:s3cret-pass').toString('base64')}` };
    expect(
      verifyWebhook({ body, headers: basic, credential: { username: 'byrd-shop', password: 's3cret-pass' } })
        .event,
    ).toBe('order.paid');
    rejects({ body, headers: basic, credential: { username: 'byrd-shop', password: 'wrong-pass' } });
    rejects({ body, headers: {}, credential: { username: 'byrd-shop', password: 's3cret-pass' } });
  });

  it('insists on something to check', () => {
    expect(() => verifyWebhook({ body, headers: signedHeaders() })).toThrow(TypeError);
  });
});
