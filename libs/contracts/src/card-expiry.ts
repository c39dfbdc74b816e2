// The card expiry rule, once, for the servers (card checks, the vault's token expiry) and the hosted
// form's page: MM/YY, valid through the last day of its month (UTC), at most 25 years ahead.

/** A card expiry as printed on the card: MM/YY. */
export const CARD_EXPIRY_PATTERN = /^(0[1-9]|1[0-2])\/(\d{2})$/;

/** An expiry farther ahead than this is a typing mistake: no card is issued for that long. */
export const CARD_EXPIRY_MAX_YEARS_AHEAD = 25;

/** Why an expiry is refused: not MM/YY, in the past, or beyond {@link CARD_EXPIRY_MAX_YEARS_AHEAD}. */
export type CardExpiryProblem = 'format' | 'expired' | 'tooFarAhead';

/** Month and four-digit year of an MM/YY expiry, null when it is not one. */
function monthAndYear(expiration: string): { month: number; year: number } | null {
  const match = CARD_EXPIRY_PATTERN.exec(expiration);
  return match ? { month: Number(match[1]), year: 2000 + Number(match[2]) } : null;
}

/** The first instant a card of this MM/YY expiry is no longer valid (the next month's first day, UTC). */
export function cardExpiryEnd(expiration: string): Date {
  const parsed = monthAndYear(expiration);
  if (!parsed) throw new RangeError(`Not an MM/YY card expiry: ${expiration}`);
  // Date.UTC takes a zero-based month, so the expiry month (1-12) names the following one.
  return new Date(Date.UTC(parsed.year, parsed.month, 1));
}

/** Whether a card of this expiry is no longer valid at `now`. */
export function isCardExpired(expiration: string, now = new Date()): boolean {
  return now.getTime() >= cardExpiryEnd(expiration).getTime();
}

/** What is wrong with a card expiry at `now`, or null when a card may carry it. */
export function cardExpiryProblem(expiration: string, now = new Date()): CardExpiryProblem | null {
  const parsed = monthAndYear(expiration);
  if (!parsed) return 'format';
  const expiry = parsed.year * 12 + parsed.month;
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
  if (expiry < current) return 'expired';
  return expiry > current + 12 * CARD_EXPIRY_MAX_YEARS_AHEAD ? 'tooFarAhead' : null;
}
