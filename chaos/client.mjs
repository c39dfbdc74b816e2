// A merchant's HTTP client as merchants are told to write it: every POST carries an idempotency-key
// and is retried with the same key on a network error, a 5xx, a 409 "still being processed" and a
// 429, with backoff, until a deadline. What still fails after that is a client-visible failure.
import { randomUUID } from 'node:crypto';
import { sleep } from './lib/util.mjs';

const REQUEST_TIMEOUT_MS = 15_000;
const RETRY_DEADLINE_MS = 120_000;

export class ClientError extends Error {
  /** `transactionId`: the payment that ended unexpectedly, for the run to explain from its rows. */
  constructor(message, answer, { transactionId } = {}) {
    super(message);
    this.answer = answer;
    this.transactionId = transactionId;
  }
}

export class MerchantClient {
  constructor(baseUrl, apiKey) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.retries = 0;
  }

  /**
   * One request, retried while retrying is what a merchant would do. Answers { status, body }
   * with the final answer (a 4xx included); throws ClientError when the deadline passed.
   */
  async request(
    method,
    path,
    body,
    { key = method === 'POST' ? randomUUID() : undefined, form, auth = true } = {},
  ) {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const headers = { accept: 'application/json' };
    if (auth) headers['x-api-key'] = this.apiKey;
    if (key) headers['idempotency-key'] = key;
    let payload;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(form).toString();
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const deadline = Date.now() + RETRY_DEADLINE_MS;
    let last;
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(url, {
          method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await response.text();
        const answer = { status: response.status, body: parse(text), text };
        if (!retryable(answer)) return answer;
        last = `${response.status} ${text.slice(0, 200)}`;
      } catch (error) {
        last = error.cause?.code ?? error.name ?? String(error);
      }
      if (Date.now() > deadline)
        throw new ClientError(`${method} ${path}: gave up after ${attempt + 1} tries (${last})`);
      this.retries++;
      await sleep(Math.min(250 * 2 ** attempt, 4_000));
    }
  }

  /** A request whose answer must have `status` (a number or a list); throws ClientError otherwise. */
  async expect(expected, method, path, body, options) {
    const answer = await this.request(method, path, body, options);
    const allowed = Array.isArray(expected) ? expected : [expected];
    if (!allowed.includes(answer.status))
      throw new ClientError(
        `${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`,
        answer,
      );
    return answer.body;
  }
}

function retryable({ status }) {
  return status >= 500 || status === 409 || status === 429;
}

function parse(text) {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}
