// `expiresIn` of an order: a .NET-style "hh:mm:ss" timespan string (optionally "d.hh:mm:ss"
// and fractional seconds, as .NET clients serialise TimeSpan) or a number of minutes.

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** Expiry used when an order is created without `expiresIn`: 15 minutes. */
export const DEFAULT_ORDER_EXPIRES_IN_MS = 15 * MINUTE_MS;
/** Longest accepted expiry: 30 days. */
export const MAX_ORDER_EXPIRES_IN_MS = 30 * DAY_MS;

const TIMESPAN = /^(?:(\d{1,2})\.)?(\d{1,3}):([0-5]\d):([0-5]\d)(?:\.(\d{1,7}))?$/;
const MINUTES = /^\d+(\.\d+)?$/;

/**
 * Parses `expiresIn` into milliseconds, or returns the sentence explaining why it cannot.
 * Numeric strings count as minutes, like numbers (clients send numbers as strings).
 */
export function tryParseExpiresIn(value: unknown): { ok: true; ms: number } | { ok: false; message: string } {
  let ms: number;
  if (typeof value === 'number' || (typeof value === 'string' && MINUTES.test(value.trim()))) {
    const minutes = Number(value);
    if (!Number.isFinite(minutes))
      return { ok: false, message: 'expiresIn must be a finite number of minutes' };
    ms = Math.round(minutes * MINUTE_MS);
  } else if (typeof value === 'string') {
    const match = TIMESPAN.exec(value.trim());
    if (!match) {
      return { ok: false, message: 'expiresIn must be a "hh:mm:ss" timespan or a number of minutes' };
    }
    const [, days = '0', hours, minutes, seconds, fraction = ''] = match;
    if (match[1] !== undefined && Number(hours) > 23) {
      return { ok: false, message: 'expiresIn hours must be 0-23 when days are given ("d.hh:mm:ss")' };
    }
    ms =
      Number(days) * DAY_MS +
      Number(hours) * 60 * MINUTE_MS +
      Number(minutes) * MINUTE_MS +
      Number(seconds) * 1000 +
      Math.round(Number(`0.${fraction || '0'}`) * 1000);
  } else {
    return { ok: false, message: 'expiresIn must be a "hh:mm:ss" timespan or a number of minutes' };
  }
  if (ms <= 0) return { ok: false, message: 'expiresIn must be greater than zero' };
  if (ms > MAX_ORDER_EXPIRES_IN_MS) return { ok: false, message: 'expiresIn must be at most 30 days' };
  return { ok: true, ms };
}

/**
 * `expiresIn` in milliseconds: "00:30:00" → 1_800_000, 30 → 1_800_000, "1.00:00:00" → one day.
 * @throws RangeError when the value is malformed, not positive or over 30 days.
 */
export function parseExpiresIn(value: string | number): number {
  const result = tryParseExpiresIn(value);
  if (!result.ok) throw new RangeError(result.message);
  return result.ms;
}
