import { MAX_ORDER_EXPIRES_IN_MS, parseExpiresIn, tryParseExpiresIn } from './expires-in.js';

const MINUTE = 60_000;

describe('parseExpiresIn', () => {
  it('reads "hh:mm:ss" timespans', () => {
    expect(parseExpiresIn('00:15:00')).toBe(15 * MINUTE);
    expect(parseExpiresIn('01:30:15')).toBe(90 * MINUTE + 15_000);
    expect(parseExpiresIn('48:00:00')).toBe(48 * 60 * MINUTE);
  });

  it('reads .NET day prefixes and fractional seconds', () => {
    expect(parseExpiresIn('1.00:00:00')).toBe(24 * 60 * MINUTE);
    expect(parseExpiresIn('00:00:01.5')).toBe(1500);
  });

  it('reads numbers and numeric strings as minutes', () => {
    expect(parseExpiresIn(30)).toBe(30 * MINUTE);
    expect(parseExpiresIn('30')).toBe(30 * MINUTE);
    expect(parseExpiresIn(0.5)).toBe(30_000);
  });

  it('accepts exactly 30 days and nothing longer', () => {
    expect(parseExpiresIn('30.00:00:00')).toBe(MAX_ORDER_EXPIRES_IN_MS);
    expect(parseExpiresIn(30 * 24 * 60)).toBe(MAX_ORDER_EXPIRES_IN_MS);
    expect(() => parseExpiresIn('30.00:00:01')).toThrow(/at most 30 days/);
    expect(() => parseExpiresIn(30 * 24 * 60 + 1)).toThrow(RangeError);
  });

  it('rejects zero, negatives and malformed values', () => {
    expect(() => parseExpiresIn(0)).toThrow(/greater than zero/);
    expect(() => parseExpiresIn('00:00:00')).toThrow(/greater than zero/);
    expect(() => parseExpiresIn(-5)).toThrow(RangeError);
    for (const bad of ['15m', '00:60:00', '1:2', 'abc', '', '1.24:00:00']) {
      expect(() => parseExpiresIn(bad)).toThrow(RangeError);
    }
    expect(() => parseExpiresIn(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('explains failures without throwing in the try variant', () => {
    expect(tryParseExpiresIn({})).toEqual({ ok: false, message: expect.stringContaining('hh:mm:ss') });
    expect(tryParseExpiresIn('00:05:00')).toEqual({ ok: true, ms: 5 * MINUTE });
  });
});
