import { randomUUID } from 'node:crypto';
import type { ErrorBody, HttpHeaders, ReturnCode } from '@byrd/contracts';
import { ByrdApiError, ByrdConnectionError } from './errors.js';
import {
  backoffDelayMs,
  isKeyInProgress,
  isRetryableStatus,
  parseRetryAfter,
  retryDelayMs,
  retryPolicy,
  type RetryOptions,
  type RetryPolicy,
} from './retry.js';
import { CLIENT_VERSION } from './version.js';

// Typed against the contracts, so a renamed header breaks this package's build, not its users.
const API_KEY_HEADER: (typeof HttpHeaders)['ApiKey'] = 'x-api-key';
const IDEMPOTENCY_KEY_HEADER: (typeof HttpHeaders)['IdempotencyKey'] = 'idempotency-key';
const REQUEST_ID_HEADER: (typeof HttpHeaders)['RequestId'] = 'x-request-id';
const RETRY_AFTER_HEADER: (typeof HttpHeaders)['RetryAfter'] = 'retry-after';

/** The local stack of `npm start` (a sandbox merchant's key works against it). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface ByrdClientOptions {
  /** The merchant's API key (a GUID), sent as `x-api-key`. */
  apiKey: string;
  /** Gateway address (orders, payments, transactions, tokens). Default {@link DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** Webhook service address (`/api/v1/...`). Default: `baseUrl` (the local edge routes both). */
  webhooksUrl?: string;
  /** Retries of connection errors, 5xx, 429 and 409 BYRD409; `false` for none. */
  retry?: RetryOptions | false;
  /** Time one attempt may take before it is abandoned (and retried). Default 30 000 ms. */
  timeoutMs?: number;
  /** A fetch implementation; default the global one (Node ≥ 18). */
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface RequestOptions {
  /**
   * Idempotency key of a state-changing call; default a new GUID per call, reused by its retries.
   * Pass your own (≤ 255 characters, e.g. your order id) to make a call safe to repeat across
   * restarts: the same key and body replay the first answer.
   */
  idempotencyKey?: string;
  /** Aborts the call, retries and waits included. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
}

export type Api = 'gateway' | 'webhooks';
type Query = Record<string, string | number | boolean | undefined>;

export interface HttpRequest {
  api: Api;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  options?: RequestOptions;
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

/** Sends requests: authentication, idempotency keys, timeouts, retries and error bodies. */
export class HttpTransport {
  /** A private field: `console.log(client)`, `util.inspect` and `JSON.stringify` never show it. */
  readonly #apiKey: string;
  private readonly urls: Record<Api, string>;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ByrdClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new TypeError('apiKey is required: the merchant API key sent as x-api-key');
    this.#apiKey = options.apiKey;
    const gateway = trimSlash(options.baseUrl ?? DEFAULT_BASE_URL);
    this.urls = { gateway, webhooks: trimSlash(options.webhooksUrl ?? gateway) };
    this.retry = retryPolicy(options.retry);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** The answer's body. */
  async call<T>(request: HttpRequest): Promise<T> {
    return (await this.request<T>(request)).body;
  }

  /** The answer's status, headers and body. */
  async request<T>(request: HttpRequest): Promise<HttpResponse<T>> {
    const label = `${request.method} ${request.path}`;
    const url = this.url(request);
    const headers = this.headers(request);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const signal = request.options?.signal;
    const timeoutMs = request.options?.timeoutMs ?? this.timeoutMs;

    // Answers 409 BYRD409 (the same key still running: its request may have died mid-payment, and
    // the server frees the key once its lease runs out) are waited out apart from the retries, for up
    // to `maxInProgressWaitMs`: giving up sooner reads as a refusal, and a new key could charge twice.
    let inProgressSince: number | null = null;
    for (let attempt = 1; ; attempt++) {
      const canRetry = attempt <= this.retry.maxRetries;
      let response: Response;
      let text: string;
      try {
        const attemptSignal = signal
          ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
          : AbortSignal.timeout(timeoutMs);
        // Never followed: a redirect to another origin would carry the API key (and a card) there.
        response = await this.fetch(url, {
          method: request.method,
          headers,
          body,
          signal: attemptSignal,
          redirect: 'manual',
        });
        // Read inside the try: a connection cut while the body streams is a lost answer too.
        text = await response.text();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!canRetry) throw new ByrdConnectionError(label, attempt, error);
        await sleep(backoffDelayMs(this.retry, attempt), signal);
        continue;
      }
      if (response.ok)
        return { status: response.status, headers: response.headers, body: parseBody<T>(text) };

      const errorBody = toErrorBody(response, text);
      const retryAfterSeconds = parseRetryAfter(response.headers.get(RETRY_AFTER_HEADER));
      const delayMs = retryDelayMs(this.retry, attempt, retryAfterSeconds);
      if (isKeyInProgress(response.status, errorBody.code) && this.retry.maxRetries > 0) {
        inProgressSince ??= Date.now();
        const waitMs = delayMs ?? backoffDelayMs(this.retry, 1);
        if (Date.now() + waitMs - inProgressSince <= this.retry.maxInProgressWaitMs) {
          attempt--; // not a failure: the call is still being answered
          await sleep(waitMs, signal);
          continue;
        }
      } else if (canRetry && delayMs !== null && isRetryableStatus(response.status, errorBody.code)) {
        await sleep(delayMs, signal);
        continue;
      }
      throw new ByrdApiError({
        status: response.status,
        body: errorBody,
        request: label,
        requestId: response.headers.get(REQUEST_ID_HEADER) ?? undefined,
        retryAfterSeconds,
      });
    }
  }

  private url(request: HttpRequest): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const search = query.size > 0 ? `?${query.toString()}` : '';
    return `${this.urls[request.api]}${request.path}${search}`;
  }

  private headers(request: HttpRequest): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': `byrd-client-node/${CLIENT_VERSION}`,
      [API_KEY_HEADER]: this.#apiKey,
      ...request.headers,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    // One key per logical call, generated once here, so every retry below repeats it.
    if (request.method !== 'GET')
      headers[IDEMPOTENCY_KEY_HEADER] = request.options?.idempotencyKey ?? randomUUID();
    return headers;
  }
}

/** Encodes a path segment (an id from user input must not reach another path). */
export function segment(value: string): string {
  if (typeof value !== 'string' || value === '') throw new TypeError('an id is required');
  return encodeURIComponent(value);
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function parseBody<T>(text: string): T {
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** The code the platform uses for a status (API-FACTS.md), for answers that lack the body. */
const FALLBACK_CODES: Record<number, ReturnCode> = {
  401: 'BYRD401',
  403: 'BYRD403',
  404: 'BYRD901',
  409: 'BYRD409',
  422: 'BYRD205',
  429: 'BYRD206',
};

/** The platform's error body, or one made up from the status when a proxy answered something else. */
function toErrorBody(response: Response, text: string): ErrorBody {
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (body && typeof body.code === 'string' && typeof body.message === 'string') return body as ErrorBody;
  } catch {
    // not JSON: fall through
  }
  return {
    code: FALLBACK_CODES[response.status] ?? (response.status >= 500 ? 'BYRD999' : 'BYRD900'),
    description: response.statusText,
    message: `HTTP ${response.status} without the platform's error body: ${text.slice(0, 200)}`,
    requestId: response.headers.get(REQUEST_ID_HEADER) ?? '',
  };
}

/** Waits `ms`; an abort of `signal` ends the wait with its reason. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
