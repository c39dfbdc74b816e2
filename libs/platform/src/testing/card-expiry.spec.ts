import { futureExpiry } from './card-expiry.js';

describe('futureExpiry', () => {
  it('is this month, two years ahead, as MM/YY', () => {
    expect(futureExpiry(2, new Date('2030-12-15T00:00:00Z'))).toBe('12/32');
    expect(futureExpiry(3, new Date('2098-01-31T23:00:00Z'))).toBe('01/01');
  });

  it('follows the real clock by default', () => {
    const year = new Date().getUTCFullYear() + 2;
    expect(futureExpiry()).toMatch(new RegExp(`^(0[1-9]|1[0-2])/${String(year % 100).padStart(2, '0')}$`));
  });
});
