// @ts-check
/* global fetch, document, window, navigator, screen, btoa, setTimeout */
/**
 * Byrd 3D Secure browser SDK (ES module, no dependencies), served at {threeds_url}/sdk.js.
 *
 *   import { ByrdThreeDS } from 'https://pay.example.com/3ds/sdk.js';
 *   const result = await ByrdThreeDS.authenticate({ id: threeDSecure.id, requestId, container });
 *
 * Runs the protocol of the public 3DS browser SDK: preAuth, the issuer's 3DS Method in a hidden
 * iframe, auth, the issuer's challenge in a visible iframe inside `container`, then postAuth until
 * the outcome is known (409 while the shopper has not answered). Resolves with the postAuth body.
 */

const METHOD_COMPLETE = 'byrd-3ds-method-complete';
const CHALLENGE_COMPLETE = 'byrd-3ds-challenge-complete';
/** postAuth answers worth asking again: unanswered challenge, not yet visible, gateway timeout. */
const RESULT_PENDING = [404, 409, 504];
/** preAuth/auth answers worth one more try: the service is briefly unavailable. */
const TRANSIENT = [502, 503, 504];

/**
 * @typedef {'01' | '02' | '03' | '04' | '05'} ChallengeWindowSize
 *
 * @typedef {object} AuthenticateOptions
 * @property {string} id `threeDSecure.id` of the payment.
 * @property {string} [requestId] `requestId` of the payment; sent as `x-request-id` to tie the logs.
 * @property {HTMLElement} container Where the issuer's challenge is shown.
 * @property {string} [baseUrl] {threeds_url}; defaults to where this file was loaded from.
 * @property {number} [pollIntervalMs] Delay between postAuth attempts (2000).
 * @property {number} [maxAttempts] postAuth attempts once no challenge is on screen (50).
 * @property {number} [methodTimeoutMs] How long the issuer's 3DS Method may take (10000, EMV).
 * @property {ChallengeWindowSize} [challengeWindowSize] EMV window size (05: the container's size).
 * @property {(step: 'preAuth' | 'method' | 'auth' | 'challenge' | 'postAuth') => void} [onProgress]
 *
 * @typedef {object} AuthenticationResult The postAuth body.
 * @property {string} transactionId
 * @property {string} callbackUrl
 * @property {'Authorized' | 'Unauthorized' | 'Expired' | 'NotEnrolled'} status
 * @property {'Y' | 'N'} transStatus Y when the payment went on (as executePayment)
 * @property {string | null} transStatusReason
 * @property {{ threeDsVersion: 'V2', aav: string | null, dsTransactionId: string | null, eci: string | null,
 *   verificationMethod: string, protocolVersion: string }} authenticationData
 * @property {boolean} executePayment
 * @property {'Success' | 'Denied' | 'Error'} paymentStatus
 * @property {string} code
 * @property {string} message
 */

/** A failed step; `status` is the HTTP status (0 when the network failed) and `body` the error body. */
export class ThreeDSError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   * @param {unknown} body
   */
  constructor(message, status, body) {
    super(message);
    this.name = 'ThreeDSError';
    this.status = status;
    this.body = body;
  }
}

/**
 * Authenticates the shopper of a payment answered with BYRD207.
 * @param {AuthenticateOptions} options
 * @returns {Promise<AuthenticationResult>}
 */
export async function authenticate(options) {
  const { id, container } = options;
  if (typeof id !== 'string' || !id) throw new TypeError('authenticate: `id` (threeDSecure.id) is required');
  if (!(container instanceof HTMLElement))
    throw new TypeError('authenticate: `container` must be an element');
  const base = (options.baseUrl ?? new URL('.', import.meta.url).href).replace(/\/+$/, '');
  const api = `${base}/api`;
  const progress = options.onProgress ?? (() => {});
  const client = new Client(options.requestId);
  const frames = new Frames(container);
  try {
    progress('preAuth');
    const preAuth = /** @type {{ processId: string, dsMethodUrl: string, notificationUrl: string }} */ (
      await client.post(`${api}/v2/${id}/preAuth`, { browser: browserData() }, TRANSIENT, 3, 1000)
    );

    let threeDSCompInd = 'U';
    if (preAuth.dsMethodUrl) {
      progress('method');
      const method = frames.open('byrd-3ds-method', false);
      const done = frames.message(method, METHOD_COMPLETE, id);
      frames.post(method, preAuth.dsMethodUrl, {
        threeDSMethodData: encode({
          threeDSServerTransID: preAuth.processId,
          threeDSMethodNotificationURL: preAuth.notificationUrl,
        }),
      });
      threeDSCompInd = await Promise.race([
        done.then(() => 'Y'),
        sleep(options.methodTimeoutMs ?? 10_000).then(() => 'N'),
      ]);
    }

    progress('auth');
    const auth =
      /** @type {{ processId: string, challengeId: string, challengeVersion: string, challengeUrl: string }} */ (
        await client.post(`${api}/v1/${id}/auth`, { threeDSCompInd }, TRANSIENT, 3, 1000)
      );

    /** @type {Promise<unknown> | null} */
    let challengeEnded = null;
    if (auth.challengeUrl) {
      progress('challenge');
      const challenge = frames.open('byrd-3ds-challenge', true);
      challengeEnded = frames.message(challenge, CHALLENGE_COMPLETE, id);
      frames.post(challenge, auth.challengeUrl, {
        creq: encode({
          threeDSServerTransID: auth.processId,
          acsTransID: auth.challengeId,
          messageVersion: auth.challengeVersion,
          messageType: 'CReq',
          challengeWindowSize: options.challengeWindowSize ?? '05',
        }),
      });
    }

    progress('postAuth');
    return await pollResult(client, `${api}/v2/${id}/postAuth`, challengeEnded, {
      intervalMs: options.pollIntervalMs ?? 2_000,
      maxAttempts: options.maxAttempts ?? 50,
    });
  } finally {
    frames.removeAll();
  }
}

/** The SDK as one object: `ByrdThreeDS.authenticate(...)`. */
export const ByrdThreeDS = Object.freeze({ authenticate });
export default ByrdThreeDS;

/**
 * Asks postAuth until the outcome is there. While the challenge is on screen the shopper sets the
 * pace (the server expires an abandoned one), so only attempts after it ended count; the issuer's
 * "challenge complete" message cuts the wait short.
 * @param {Client} client
 * @param {string} url
 * @param {Promise<unknown> | null} challengeEnded
 * @param {{ intervalMs: number, maxAttempts: number }} limits
 */
async function pollResult(client, url, challengeEnded, { intervalMs, maxAttempts }) {
  let onScreen = challengeEnded !== null;
  /** @type {Promise<unknown>} */
  let wake = new Promise(() => {});
  if (challengeEnded) {
    wake = challengeEnded.then(() => {
      onScreen = false;
    });
  }
  for (let attempt = 1; ;) {
    const answer = await client.send(url, undefined);
    if (answer.ok) return /** @type {AuthenticationResult} */ (answer.body);
    const pending = answer.status === 0 || RESULT_PENDING.includes(answer.status);
    if (!pending || (!onScreen && attempt >= maxAttempts)) {
      throw new ThreeDSError(
        errorMessage(answer.body, 'The authentication result is not available'),
        answer.status,
        answer.body,
      );
    }
    if (!onScreen) attempt += 1;
    const woken = await Promise.race([wake.then(() => true), sleep(intervalMs).then(() => false)]);
    // The message arrives once: later waits are plain intervals.
    if (woken) wake = new Promise(() => {});
  }
}

class Client {
  /** @param {string | undefined} requestId */
  constructor(requestId) {
    /** @type {Record<string, string>} */
    this.headers = { accept: 'application/json', 'content-type': 'application/json' };
    if (requestId) this.headers['x-request-id'] = requestId;
  }

  /**
   * POSTs JSON; answers with the status and parsed body (status 0 when the network failed).
   * @param {string} url
   * @param {unknown} body
   * @returns {Promise<{ ok: boolean, status: number, body: unknown }>}
   */
  async send(url, body) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body ?? {}),
        credentials: 'omit',
      });
      const text = await response.text();
      const parsed = text ? safeJson(text) : null;
      // A 2xx answer carries its payload in `data` (as the public 3DS SDK reads it); errors do not.
      return { ok: response.ok, status: response.status, body: response.ok ? field(parsed, 'data') : parsed };
    } catch (error) {
      return { ok: false, status: 0, body: { message: String(error) } };
    }
  }

  /**
   * POSTs and returns the body of a 2xx answer, trying again on `retryOn` statuses.
   * @param {string} url
   * @param {unknown} body
   * @param {number[]} retryOn
   * @param {number} attempts
   * @param {number} delayMs
   * @returns {Promise<unknown>}
   */
  async post(url, body, retryOn, attempts, delayMs) {
    for (let attempt = 1; ; attempt++) {
      const answer = await this.send(url, body);
      if (answer.ok) return answer.body;
      const transient = answer.status === 0 || retryOn.includes(answer.status);
      if (!transient || attempt >= attempts) {
        throw new ThreeDSError(
          errorMessage(answer.body, `Request failed (${answer.status})`),
          answer.status,
          answer.body,
        );
      }
      await sleep(delayMs);
    }
  }
}

/** The iframes and forms the flow adds to the page, and the messages their pages send. */
class Frames {
  /** @param {HTMLElement} container */
  constructor(container) {
    this.container = container;
    /** @type {Element[]} */
    this.elements = [];
    /** @type {Array<(event: MessageEvent) => void>} */
    this.listeners = [];
  }

  /**
   * @param {string} name
   * @param {boolean} visible
   */
  open(name, visible) {
    const iframe = document.createElement('iframe');
    // Unique per flow, so two flows on one page never post into each other's frame.
    iframe.name = `${name}-${Math.random().toString(36).slice(2)}`;
    if (visible) {
      iframe.title = 'Payment verification by your bank';
      Object.assign(iframe.style, {
        display: 'block',
        width: '100%',
        height: '100%',
        minHeight: '420px',
        border: '0',
      });
    } else {
      iframe.title = 'Device check by your bank';
      iframe.setAttribute('aria-hidden', 'true');
      iframe.tabIndex = -1;
      Object.assign(iframe.style, {
        position: 'absolute',
        width: '0',
        height: '0',
        border: '0',
        visibility: 'hidden',
      });
    }
    this.container.appendChild(iframe);
    this.elements.push(iframe);
    return iframe;
  }

  /**
   * Form-posts `fields` into the frame (the issuer's pages are reached by POST, as EMV requires).
   * @param {HTMLIFrameElement} iframe
   * @param {string} action
   * @param {Record<string, string>} fields
   */
  post(iframe, action, fields) {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = action;
    form.target = iframe.name;
    form.hidden = true;
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.appendChild(input);
    }
    this.container.appendChild(form);
    this.elements.push(form);
    form.submit();
  }

  /**
   * Resolves when the page inside `iframe` posts `{ type, id }` to us.
   * @param {HTMLIFrameElement} iframe
   * @param {string} type
   * @param {string} id
   * @returns {Promise<unknown>}
   */
  message(iframe, type, id) {
    return new Promise((resolve) => {
      /** @param {MessageEvent} event */
      const listener = (event) => {
        const data = /** @type {unknown} */ (event.data);
        if (
          event.source === iframe.contentWindow &&
          field(data, 'type') === type &&
          field(data, 'id') === id
        ) {
          resolve(data);
        }
      };
      window.addEventListener('message', listener);
      this.listeners.push(listener);
    });
  }

  removeAll() {
    for (const listener of this.listeners) window.removeEventListener('message', listener);
    for (const element of this.elements) element.remove();
    this.listeners = [];
    this.elements = [];
  }
}

/** EMV "browser information" for the issuer's risk analysis. */
function browserData() {
  return {
    acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    javaEnabled: false,
    javascriptEnabled: true,
    language: navigator.language,
    colorDepth: [48, 32, 24, 16, 15, 8, 4, 1].find((depth) => depth <= screen.colorDepth) ?? 24,
    screenHeight: screen.height,
    screenWidth: screen.width,
    timeZone: new Date().getTimezoneOffset(),
    userAgent: navigator.userAgent,
  };
}

/**
 * base64url of the JSON of `message` (EMV threeDSMethodData / creq).
 * @param {object} message
 */
function encode(message) {
  const bytes = new TextEncoder().encode(JSON.stringify(message));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function safeJson(text) {
  try {
    return /** @type {unknown} */ (JSON.parse(text));
  } catch {
    return { message: text };
  }
}

/**
 * A property of a value that may not be an object.
 * @param {unknown} value
 * @param {string} name
 * @returns {unknown}
 */
function field(value, name) {
  return typeof value === 'object' && value !== null
    ? /** @type {Record<string, unknown>} */ (value)[name]
    : undefined;
}

/**
 * @param {unknown} body
 * @param {string} fallback
 * @returns {string}
 */
function errorMessage(body, fallback) {
  const message = field(body, 'message');
  return typeof message === 'string' ? message : fallback;
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
