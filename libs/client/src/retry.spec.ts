import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, retryDelayMs, retryPolicy } from './retry.js';

describe('retry policy', () => {
  it('retries server failures, rate limits and a still-running idempotent request, never a refusal', () => {
    for (const status of [500, 502, 503, 504, 429]) expect(isRetryableStatus(status, 'BYRD999')).toBe(true);
    expect(isRetryableStatus(409, 'BYRD409')).toBe(true);
    for (const [status, code] of [
      [400, 'BYRD900'],
      [401, 'BYRD401'],
      [404, 'BYRD901'],
      [409, 'BYRD201'],
      [422, 'BYRD231'],
    ] as const)
      expect(isRetryableStatus(status, code)).toBe(false);
  });

  it('backs off exponentially with jitter, capped', () => {
    const policy = { ...DEFAULT_RETRY, maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(policy, n, undefined, () => 1))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect([1, 2, 3].map((n) => retryDelayMs(policy, n, undefined, () => 0))).toEqual([50, 100, 200]);
  });

  it('waits as long as Retry-After says, past the backoff cap; longer than maxRetryAfterMs, not at all', () => {
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 5_000 };
    expect(retryDelayMs(policy, 1, 2)).toBe(2_000);
    // A rate-limit window's end: retrying before it would only burn the retries.
    expect(retryDelayMs(policy, 1, 60)).toBe(60_000);
    expect(retryDelayMs(policy, 1, 61)).toBeNull();
    expect(parseRetryAfter('3')).toBe(3);
    expect(
      parseRetryAfter(new Date(Date.UTC(2026, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2026, 0, 1)),
    ).toBe(10);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    // Not seconds, not an HTTP date (Date.parse would read them as dates of 2001: no wait at all).
    expect(parseRetryAfter('1.5')).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
    // RFC 850's and asctime's dates, which RFC 9110 says a recipient must still read.
    const now = Date.UTC(1994, 10, 6, 8, 49, 0);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(37);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBeGreaterThanOrEqual(0);
  });

  it('is configurable, and off with false', () => {
    expect(retryPolicy(undefined)).toEqual(DEFAULT_RETRY);
    expect(retryPolicy(false).maxRetries).toBe(0);
    expect(retryPolicy({ maxRetries: 1 })).toEqual({ ...DEFAULT_RETRY, maxRetries: 1 });
    expect(() => retryPolicy({ maxRetries: -1 })).toThrow(/maxRetries/);
  });
});
