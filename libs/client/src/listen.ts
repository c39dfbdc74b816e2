import { DEFAULT_BASE_URL } from './http.js';
import type { ErrorBody } from '@byrd/contracts';
import { ByrdApiError } from './errors.js';
import { parseRetryAfter } from './retry.js';

/** A delivery as `GET /api/v1/webhooks/listen` streams it: the headers and body a setting would get. */
export interface ListenedDelivery {
  id: string;
  event: string;
  headers: Record<string, string>;
  body: string;
}

/** What forwarding one delivery to the local address gave. */
export interface ForwardResult {
  delivery: ListenedDelivery;
  /** The local receiver's status, or null when it could not be reached. */
  status: number | null;
  error?: string;
  durationMs: number;
}

export interface ListenOptions {
  apiKey: string;
  /** Where the platform's webhook service answers (the edge). Default {@link DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** The local address each delivery is POSTed to, e.g. http://localhost:3000/hooks. */
  forwardTo: string;
  /** Only these events (names of the catalogue); default every event. */
  events?: string[];
  /** Ends listening. */
  signal?: AbortSignal;
  /** The session is open: the secret the deliveries are signed with (stable per merchant). */
  onReady?(session: { sessionId: string; signingSecret: string }): void;
  onForwarded?(result: ForwardResult): void;
  /** The stream dropped and will be opened again in `retryInMs`. */
  onReconnecting?(reason: string, retryInMs: number): void;
  /** Time the local receiver may take. Default 10 000 ms. */
  forwardTimeoutMs?: number;
  fetch?: typeof fetch;
}

const MAX_RECONNECT_DELAY_MS = 10_000;

/**
 * Streams the merchant's sandbox deliveries and POSTs each to a local address, signed exactly as a
 * webhook setting's deliveries are (verify them with `verifyWebhook` and the session's secret), so a
 * laptop receives real webhooks without being reachable from outside. Reconnects when the stream
 * drops (the secret stays the same); a refusal (bad key, live key, unknown event) throws at once.
 * Resolves when `signal` aborts.
 */
export async function listen(options: ListenOptions): Promise<void> {
  let failures = 0;
  while (!options.signal?.aborted) {
    let reason: string;
    let retryAfterMs = 0;
    try {
      const events = await openListenStream(options);
      failures = 0;
      for await (const { event, data } of events) {
        if (event === 'ready')
          options.onReady?.(JSON.parse(data) as { sessionId: string; signingSecret: string });
        if (event === 'delivery')
          options.onForwarded?.(await forward(JSON.parse(data) as ListenedDelivery, options));
      }
      reason = 'the stream ended';
    } catch (error) {
      if (options.signal?.aborted) return;
      // A refusal stays a refusal: only the platform being away, or busy (429: the merchant's
      // streams are all open, one of them perhaps this CLI's own that the platform has not yet seen
      // go), is worth waiting for.
      if (error instanceof ByrdApiError && error.status < 500 && error.status !== 429) throw error;
      reason = error instanceof Error ? error.message : String(error);
      retryAfterMs = error instanceof ByrdApiError ? (error.retryAfterSeconds ?? 0) * 1000 : 0;
    }
    if (options.signal?.aborted) return;
    const delay = Math.max(retryAfterMs, Math.min(500 * 2 ** failures++, MAX_RECONNECT_DELAY_MS));
    options.onReconnecting?.(reason, delay);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Opens `GET /api/v1/webhooks/listen` and returns its server-sent events (`ready`, then one
 * `delivery` each); an answer other than 200 throws {@link ByrdApiError} with the platform's body.
 */
export async function openListenStream(options: {
  apiKey: string;
  baseUrl?: string;
  events?: string[];
  signal?: AbortSignal;
  fetch?: typeof fetch;
}): Promise<AsyncGenerator<{ event: string; data: string }>> {
  const url = new URL('/api/v1/webhooks/listen', options.baseUrl ?? DEFAULT_BASE_URL);
  if (options.events?.length) url.searchParams.set('events', options.events.join(','));
  const response = await (options.fetch ?? fetch)(url, {
    headers: { 'x-api-key': options.apiKey, accept: 'text/event-stream' },
    signal: options.signal,
    redirect: 'manual', // a redirect would carry the API key to another address: an error instead
  });
  if (response.status !== 200 || !response.body) {
    const body = (await response.json().catch(() => ({}))) as Partial<ErrorBody>;
    throw new ByrdApiError({
      status: response.status,
      body: {
        code: body.code ?? 'BYRD999',
        description: body.description ?? 'Unhandled error',
        message: body.message ?? `answered ${response.status}`,
        errors: body.errors,
        requestId: body.requestId,
      } as ErrorBody,
      request: `GET ${url.pathname}`,
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
    });
  }
  return serverSentEvents(response.body);
}

/** The `event:` / `data:` pairs of a text/event-stream body (comments and keep-alives skipped). */
async function* serverSentEvents(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) yield { event, data };
    }
  }
}

/** POSTs one delivery to the local receiver, as the webhook service would. */
async function forward(delivery: ListenedDelivery, options: ListenOptions): Promise<ForwardResult> {
  const started = Date.now();
  try {
    const answer = await (options.fetch ?? fetch)(options.forwardTo, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      signal: AbortSignal.timeout(options.forwardTimeoutMs ?? 10_000),
    });
    await answer.arrayBuffer();
    return { delivery, status: answer.status, durationMs: Date.now() - started };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      delivery,
      status: null,
      error: cause ?? (error instanceof Error ? error.message : String(error)),
      durationMs: Date.now() - started,
    };
  }
}
