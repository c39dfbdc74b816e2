import {
  MAX_ATTEMPTS,
  nextRetryDelayMs,
  parseRetryAfter,
  receiverVerdict,
  SCHEDULE_SPAN_MINUTES,
  scheduledDelayMs,
} from './retry-policy.js';

const MINUTE = 60_000;

describe('retry policy (SPEC.md "Limits")', () => {
  it('waits 1 minute after the first failure, one more per retry, capped at an hour', () => {
    expect(scheduledDelayMs(1, MINUTE)).toBe(MINUTE);
    expect(scheduledDelayMs(2, MINUTE)).toBe(2 * MINUTE);
    expect(scheduledDelayMs(59, MINUTE)).toBe(59 * MINUTE);
    expect(scheduledDelayMs(60, MINUTE)).toBe(60 * MINUTE);
    expect(scheduledDelayMs(61, MINUTE)).toBe(60 * MINUTE);
  });

  it('retries 50 times: attempt 51 is the last, and nothing follows it', () => {
    expect(MAX_ATTEMPTS).toBe(51);
    const failed = (number: number) => ({ number, statusCode: 500, retryAfter: null });
    expect(nextRetryDelayMs(failed(50), MINUTE)).toBe(50 * MINUTE);
    expect(nextRetryDelayMs(failed(51), MINUTE)).toBeNull();
    const delays = Array.from({ length: 50 }, (_, i) => nextRetryDelayMs(failed(i + 1), 10));
    expect(delays).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * 10));
    // The whole schedule: 1 + 2 + ... + 50 minutes.
    expect(SCHEDULE_SPAN_MINUTES).toBe(1_275);
  });

  it('lengthens the wait for a 429 or a Retry-After, never shortens it', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(nextRetryDelayMs({ number: 3, statusCode: 429, retryAfter: null }, MINUTE, now)).toBe(6 * MINUTE);
    expect(nextRetryDelayMs({ number: 3, statusCode: 503, retryAfter: '600' }, MINUTE, now)).toBe(
      10 * MINUTE,
    );
    expect(nextRetryDelayMs({ number: 3, statusCode: 503, retryAfter: '1' }, MINUTE, now)).toBe(3 * MINUTE);
    expect(nextRetryDelayMs({ number: 3, statusCode: 429, retryAfter: '0' }, MINUTE, now)).toBe(6 * MINUTE);
    expect(
      nextRetryDelayMs(
        { number: 1, statusCode: 503, retryAfter: 'Thu, 01 Jan 2026 00:30:00 GMT' },
        MINUTE,
        now,
      ),
    ).toBe(30 * MINUTE);
    // Never past SPEC's cap of an hour, whatever the receiver asks.
    expect(nextRetryDelayMs({ number: 1, statusCode: 503, retryAfter: '99999999' }, MINUTE, now)).toBe(
      60 * MINUTE,
    );
    expect(nextRetryDelayMs({ number: 40, statusCode: 429, retryAfter: null }, MINUTE, now)).toBe(
      60 * MINUTE,
    );
  });

  it('reads Retry-After as seconds or an HTTP date, ignoring garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('judges the receiver by its answer: a refusal (a 4xx but 408, 429; a 3xx) is neither a success nor a failure', () => {
    const verdicts = [null, 200, 204, 299, 301, 400, 401, 404, 408, 410, 422, 429, 499, 500, 503].map(
      (status) => [status, receiverVerdict(status)],
    );
    expect(verdicts).toEqual([
      [null, false], // no answer: a timeout, a refused connection
      [200, true],
      [204, true],
      [299, true],
      [301, null],
      [400, null],
      [401, null],
      [404, null],
      [408, false],
      [410, null],
      [422, null],
      [429, false],
      [499, null],
      [500, false],
      [503, false],
    ]);
  });
});
