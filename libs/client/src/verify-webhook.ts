import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookCredential, WebhookDelivery } from '@byrd/contracts';
import { WebhookVerificationError } from './errors.js';

/** What a webhook setting gave you at creation: its signing secret and its credential. */
export interface VerifyWebhookOptions {
  /** The request body exactly as received (before any JSON parsing): a string or the raw bytes. */
  body: string | Uint8Array;
  /** The request headers: a fetch `Headers`, or Node's `request.headers` (any casing). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The setting's `signingSecret` (`whsec_...`): checks the Standard Webhooks signature. */
  signingSecret?: string;
  /**
   * The setting's `credential`: its `apiKey` must arrive as `X-Api-Key`, or its `username` and
   * `password` as `Authorization: Basic`.
   */
  credential?: Pick<WebhookCredential, 'apiKey'> | Pick<WebhookCredential, 'username' | 'password'>;
  /** How far `webhook-timestamp` may be from now, in seconds (replay window). Default 300. */
  toleranceSeconds?: number;
  /** The current time; for tests. */
  now?: Date;
}

const SECRET_PREFIX = 'whsec_';

/**
 * Checks a webhook delivery and returns its typed body. With `signingSecret`: the
 * `webhook-signature` header must hold a `v1,<base64 HMAC-SHA256>` of `"<webhook-id>.<webhook-timestamp>.<body>"`
 * and the timestamp must be within `toleranceSeconds`. With `credential`: the API key or the basic
 * credentials must match. Pass both to check both. Every comparison is constant-time.
 * Throws {@link WebhookVerificationError} on any mismatch (answer the delivery 401 then).
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookDelivery {
  if (options.signingSecret === undefined && options.credential === undefined)
    throw new TypeError('verifyWebhook needs the setting’s signingSecret, its credential, or both');
  const headers = lowerCaseHeaders(options.headers);
  const body = typeof options.body === 'string' ? Buffer.from(options.body) : Buffer.from(options.body);
  if (options.signingSecret !== undefined) {
    checkSignature(options.signingSecret, headers, body, options.toleranceSeconds ?? 300, options.now);
  }
  if (options.credential !== undefined) checkCredential(options.credential, headers);
  try {
    return JSON.parse(body.toString('utf8')) as WebhookDelivery;
  } catch {
    throw new WebhookVerificationError('The webhook body is not JSON');
  }
}

function checkSignature(
  secret: string,
  headers: Map<string, string>,
  body: Buffer,
  toleranceSeconds: number,
  now = new Date(),
): void {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  if (Math.abs(now.getTime() / 1_000 - Number(timestamp)) > toleranceSeconds)
    throw new WebhookVerificationError(
      `webhook-timestamp is more than ${toleranceSeconds} s away from now (a replay, or a wrong clock)`,
    );
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  if (key.length === 0) throw new TypeError('signingSecret is empty');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  // Several space-separated signatures may be sent (e.g. while a secret rotates): one must match.
  const matches = signatures.split(' ').some((versioned) => {
    const [version, signature] = versioned.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches)
    throw new WebhookVerificationError('No webhook-signature matches the body and the signing secret');
}

function checkCredential(
  credential: NonNullable<VerifyWebhookOptions['credential']>,
  headers: Map<string, string>,
): void {
  if ('apiKey' in credential && credential.apiKey) {
    if (!sameSecret(headers.get('x-api-key'), credential.apiKey))
      throw new WebhookVerificationError('The X-Api-Key header does not match the setting’s API key');
    return;
  }
  if ('username' in credential && credential.username != null && credential.password != null) {
    const expected = `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`;
    if (!sameSecret(headers.get('authorization'), expected))
      throw new WebhookVerificationError(
        'The Authorization header does not match the setting’s username and password',
      );
    return;
  }
  throw new TypeError('credential needs an apiKey, or a username and a password');
}

/** Constant-time equality of two strings of any lengths (compared as SHA-256 digests). */
function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function lowerCaseHeaders(headers: VerifyWebhookOptions['headers']): Map<string, string> {
  const map = new Map<string, string>();
  if (isFetchHeaders(headers)) {
    headers.forEach((value, name) => map.set(name, value)); // already lower case
    return map;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    map.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
  }
  return map;
}

/** A fetch `Headers` of any realm (undici's, a framework's), told apart from a plain object. */
function isFetchHeaders(headers: VerifyWebhookOptions['headers']): headers is Headers {
  return typeof headers.forEach === 'function' && typeof headers.get === 'function';
}
