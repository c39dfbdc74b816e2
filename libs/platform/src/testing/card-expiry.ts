/**
 * A card expiry (MM/YY) `yearsAhead` years after `now`, for tests that send cards to services
 * checking expiry on the real clock: a fixed date such as 12/30 would start failing once it passed.
 */
export function futureExpiry(yearsAhead = 2, now = new Date()): string {
  const month = String(now.getUTCMonth() + 1).padStart(2, '0');
  const year = String((now.getUTCFullYear() + yearsAhead) % 100).padStart(2, '0');
  return `${month}/${year}`;
}
