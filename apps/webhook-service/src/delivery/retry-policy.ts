/** SPEC.md "Limits": up to 50 retries per webhook, so 51 scheduled attempts in all. */
export const MAX_RETRIES = 50;
export const MAX_ATTEMPTS = MAX_RETRIES + 1;
// The schedule counts minutes; how long a minute lasts is `minuteMs` (WEBHOOK_RETRY_UNIT_MS, 60 000
// by default; tests shrink it to run the whole schedule in seconds).

/** The retry delay grows by one minute per retry, capped at 60 minutes (one hour). */
export const DELAY_CAP_MINUTES = 60;

/**
 * How long the whole schedule lasts, in minutes: the waits after attempts 1 to 50 (1 + 2 + … + 50 =
 * 1 275 minutes, about 21 hours). A webhook held back longer than this has had the time of all its
 * attempts (see ExpireHeldWebhooks).
 */
export const SCHEDULE_SPAN_MINUTES = Array.from({ length: MAX_RETRIES }, (_, i) =>
  Math.min(i + 1, DELAY_CAP_MINUTES),
).reduce((sum, minutes) => sum + minutes, 0);

/** Wait after the n-th failed attempt (1-based): min(n, 60) minutes. */
export function scheduledDelayMs(failedAttempt: number, minuteMs: number): number {
  return Math.min(failedAttempt, DELAY_CAP_MINUTES) * minuteMs;
}

/** `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export interface FailedAttempt {
  /** 1-based number of the scheduled attempt that failed. */
  number: number;
  /** Receiver's status, null without an answer. */
  statusCode: number | null;
  /** Receiver's `Retry-After` header. */
  retryAfter: string | null;
  /** The setting's retryOn4xx: false ends the webhook at a 4xx other than 408 / 429. */
  retryOn4xx?: boolean;
}

/** A 4xx the receiver may get over (a timeout, a rate limit), retried even when 4xx are not. */
const TRANSIENT_4XX = new Set([408, 429]);

/**
 * What an attempt says about its endpoint's receiver, for the circuit breaker and `failing_since`
 * (docs/webhook-fairness.md): true when it took the webhook (2xx); false when it is down or
 * overwhelmed (no answer, a 5xx, 408, 429); null when it answered a refusal (another 4xx, a 3xx):
 * it is up and chose not to take that event (README tells merchants to answer 4xx to events they do
 * not want), so the attempt judges nothing.
 */
export function receiverVerdict(statusCode: number | null): boolean | null {
  if (statusCode === null || statusCode >= 500 || TRANSIENT_4XX.has(statusCode)) return false;
  return statusCode >= 200 && statusCode < 300 ? true : null;
}

/**
 * Milliseconds to wait before the next scheduled attempt, or null when the last one has been made
 * (the webhook has failed). A 429 doubles the wait and a `Retry-After` raises it to what the
 * receiver asked; neither ever shortens it, nor makes it longer than SPEC's cap of an hour.
 */
export function nextRetryDelayMs(failed: FailedAttempt, minuteMs: number, now = Date.now()): number | null {
  if (failed.number >= MAX_ATTEMPTS) return null;
  const refused = failed.statusCode !== null && failed.statusCode >= 400 && failed.statusCode < 500;
  if (refused && failed.retryOn4xx === false && !TRANSIENT_4XX.has(failed.statusCode!)) return null;
  let delay = scheduledDelayMs(failed.number, minuteMs);
  if (failed.statusCode === 429) delay *= 2;
  const asked = parseRetryAfter(failed.retryAfter, now);
  if (asked !== null) delay = Math.max(delay, asked);
  return Math.min(delay, DELAY_CAP_MINUTES * minuteMs);
}
