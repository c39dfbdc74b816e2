import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, request, type Dispatcher } from 'undici';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { RefusedUrlError, UrlGuard } from './url-guard.js';

/** Most bytes of a receiver's answer that are kept (API-FACTS: response content up to 20 KB). */
export const MAX_RESPONSE_BYTES = 20 * 1024;

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OutboundResult {
  /** HTTP status, null when no answer came (timeout, connection error, refused address). */
  statusCode: number | null;
  /** Up to {@link MAX_RESPONSE_BYTES} of the answer body. */
  responseBody: string | null;
  /** `retry-after` of the answer, as sent. */
  retryAfter: string | null;
  /** Why there was no answer, or why its body was not read to its end (the status still counts). */
  error: string | null;
  durationMs: number;
}

/**
 * POSTs deliveries with undici over a keep-alive pool whose every connection is opened through the
 * SSRF guard's lookup. Redirects are never followed (a 3xx is just a non-2xx answer).
 */
@Injectable()
export class WebhookHttpSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(
    private readonly guard: UrlGuard,
    @Inject(WEBHOOK_CONFIG) config: WebhookConfig,
  ) {
    this.timeoutMs = config.WEBHOOK_TIMEOUT_MS;
    this.agent = new Agent({
      connect: { lookup: guard.lookup, timeout: config.WEBHOOK_TIMEOUT_MS },
      headersTimeout: config.WEBHOOK_TIMEOUT_MS,
      bodyTimeout: config.WEBHOOK_TIMEOUT_MS,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }

  async post(outbound: OutboundRequest): Promise<OutboundResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let response: Dispatcher.ResponseData;
    try {
      // IP literals never reach the lookup: check them here.
      this.guard.checkLiteral(new URL(outbound.url).hostname);
      response = await request(outbound.url, {
        method: 'POST',
        headers: outbound.headers,
        body: outbound.body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      return {
        statusCode: null,
        responseBody: null,
        retryAfter: null,
        error: describeFailure(error, this.timeoutMs),
        durationMs: elapsed(),
      };
    }
    // The status came: the receiver answered, whatever happens to the body. A 2xx whose body is cut
    // or slow is a delivery (read as no answer, it was sent again and again).
    const retryAfter = response.headers['retry-after'];
    const { text, error } = await readCapped(response.body);
    return {
      statusCode: response.statusCode,
      responseBody: text,
      retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
      error: error === null ? null : describeBodyFailure(error, this.timeoutMs),
      durationMs: elapsed(),
    };
  }
}

/** Up to MAX_RESPONSE_BYTES of the body, and what stopped it being read to its end (what came is kept). */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
): Promise<{ text: string; error: unknown }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let error: unknown = null;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) {
        body.destroy();
        break;
      }
    }
  } catch (cut) {
    error = cut;
  }
  return { text: storableText(Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES)), error };
}

/**
 * The answer as text PostgreSQL stores (`text` refuses a NUL, `jsonb` its `\u0000`): unstorable, its
 * attempt could never be recorded and the webhook would go out again at every lease's end. Decoding
 * already turns bytes that are not UTF-8 (encoded surrogates too) into U+FFFD; NUL gets the same.
 */
function storableText(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\0', '\uFFFD');
}

/** Why an answer's body stopped before its end (its status and the part read are kept). */
function describeBodyFailure(error: unknown, timeoutMs: number): string {
  return isTimeout(error)
    ? `The answer's body did not end within ${timeoutMs} ms`
    : `The answer's body was cut: ${describeFailure(error, timeoutMs)}`;
}

function isTimeout(error: unknown): boolean {
  const e = error as { name?: string; code?: string };
  return (
    e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT'
  );
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof RefusedUrlError) return `The receiver URL ${error.message}`;
  const e = error as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (isTimeout(error)) return `No answer within ${timeoutMs} ms`;
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return `Could not connect within ${timeoutMs} ms`;
  const code = e.code ?? e.cause?.code;
  const message = e.message ?? e.cause?.message ?? String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
