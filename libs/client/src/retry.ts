/** How failed requests are retried. Every retry of a state-changing call carries the same idempotency key. */
export interface RetryOptions {
  /** Retries after the first attempt (0 turns retries off). Default 3. */
  maxRetries?: number;
  /** Delay before the first retry, doubled for each next one (with jitter). Default 250 ms. */
  baseDelayMs?: number;
  /** Longest wait of the backoff between two attempts. Default 8 000 ms. */
  maxDelayMs?: number;
  /**
   * Longest `Retry-After` waited out (in full: an earlier retry would only be refused again). A
   * server asking for longer gets its error thrown at once, `retryAfterSeconds` telling when to try
   * again. Default 60 000 ms, the platform's rate-limit window.
   */
  maxRetryAfterMs?: number;
  /**
   * How long a call keeps asking while the server answers that its idempotency key is still running
   * (409 BYRD409), apart from `maxRetries`: an attempt that died mid-call holds the key until its
   * lease runs out (15 s on the platform), and its outcome is only known after. Default 30 000 ms.
   */
  maxInProgressWaitMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  maxInProgressWaitMs: 30_000,
};

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, maxRetries: 0 };
  const policy = { ...DEFAULT_RETRY, ...options };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isInteger(value) || value < 0)
      throw new TypeError(`retry.${name} must be a whole number of 0 or more, got ${value}`);
  }
  return policy;
}

/**
 * Statuses worth another attempt: the server failed (5xx, where the platform also frees the
 * idempotency key), asked us to slow down (429), or the same key is still running (409 BYRD409).
 */
export function isRetryableStatus(status: number, code: string | undefined): boolean {
  return status >= 500 || status === 429 || isKeyInProgress(status, code);
}

/** 409 BYRD409: the same idempotency key is still running on the server (waited out, see RetryOptions). */
export function isKeyInProgress(status: number, code: string | undefined): boolean {
  return status === 409 && code === 'BYRD409';
}

/**
 * Wait before retry number `retry` (1-based): the server's `Retry-After` when it sent one, or null
 * (do not retry) when that is over `maxRetryAfterMs`; else {@link backoffDelayMs}.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number | null {
  if (retryAfterSeconds === undefined) return backoffDelayMs(policy, retry, random);
  const asked = retryAfterSeconds * 1_000;
  return asked <= policy.maxRetryAfterMs ? asked : null;
}

/**
 * Exponential backoff with jitter before retry number `retry` (1-based): half fixed, half random, so
 * clients that failed together spread out; never above `maxDelayMs`.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.baseDelayMs * 2 ** (retry - 1), policy.maxDelayMs);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** `Retry-After` as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  // Only an HTTP date, which starts with its weekday (`Wed, 21 Oct 2015 07:28:00 GMT`, RFC 850's
  // `Wednesday, 21-Oct-15 …`, asctime's `Wed Oct 21 …`): Date.parse reads "1.5" or "-1" as dates of 2001.
  if (!/^\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(header)) return undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1_000));
}
