import { cardExpiryEnd, cardExpiryProblem, isCardExpired } from './card-expiry.js';

describe('card expiry', () => {
  const now = new Date('2026-11-25T12:00:00Z');

  it('is valid through the last day of its month, UTC', () => {
    expect(cardExpiryEnd('11/26').toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(cardExpiryEnd('12/30').toISOString()).toBe('2031-01-01T00:00:00.000Z');
    expect(isCardExpired('11/26', new Date('2026-11-30T23:59:59Z'))).toBe(false);
    expect(isCardExpired('11/26', new Date('2026-12-01T00:00:00Z'))).toBe(true);
  });

  it('refuses what is not MM/YY, a past month, and more than 25 years ahead', () => {
    expect(cardExpiryProblem('11/26', now)).toBeNull();
    expect(cardExpiryProblem('10/26', now)).toBe('expired');
    expect(cardExpiryProblem('11/51', now)).toBeNull();
    expect(cardExpiryProblem('12/51', now)).toBe('tooFarAhead');
    for (const typed of ['13/30', '00/30', '1/30', '12/2030', ' 12/30', '']) {
      expect(cardExpiryProblem(typed, now)).toBe('format');
    }
    expect(() => cardExpiryEnd('13/30')).toThrow(RangeError);
  });
});
