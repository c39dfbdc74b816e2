import {
  ACCEPTED_CARD_BRANDS,
  CARD_EXPIRY_MAX_YEARS_AHEAD,
  cardExpiryProblem,
  MAX_CARD_NUMBER_DIGITS,
  verifyCardNumber,
  type CardBrand,
  type CardExpiryProblem,
} from '@byrd/contracts';
import { ApiError, type FieldError } from '../errors/index.js';

export interface CardInput {
  number: string;
  expiration: string;
  cvv?: string;
  holder?: string | null;
}

export interface CheckedCard {
  number: string;
  brand: CardBrand;
  /** MM/YY */
  expiration: string;
  masked: string;
}

const EXPIRY_MESSAGES: Record<CardExpiryProblem, string> = {
  format: 'must be MM/YY',
  expired: 'the card has expired',
  tooFarAhead: `is more than ${CARD_EXPIRY_MAX_YEARS_AHEAD} years ahead`,
};

/** Digits a mask always hides: with fewer, the Luhn digit leaves a handful of candidates to try. */
const MIN_HIDDEN_DIGITS = 5;

/**
 * First six and last four digits visible, the rest `*` (PCI DSS display form). A number shorter
 * than 15 digits (Maestro's 12 to 14) shows fewer leading digits, so that five stay hidden: first
 * six and last four of 12 digits would leave two, ten candidates once Luhn is applied.
 */
export function maskCardNumber(number: string): string {
  const last = number.slice(-4);
  const first = number.slice(0, Math.max(0, Math.min(6, number.length - 4 - MIN_HIDDEN_DIGITS)));
  return `${first}${'*'.repeat(number.length - first.length - last.length)}${last}`;
}

/**
 * The card checks a payments engineer expects before anything is sent to an acquirer: Luhn,
 * brand by BIN (longest prefix wins), expiry by the contracts' rule (not past, at most 25 years
 * ahead), CVV length by brand. Every failure is reported against its field (`card.number`,
 * `card.expiration`, `card.cvv`).
 */
export function checkCard(card: CardInput, now = new Date(), fieldPrefix = 'card'): CheckedCard {
  const number = card.number.replace(/[\s-]/g, '');
  const errors: FieldError[] = [];
  // The same rules as acceptedCardBrand (contracts), which free text is screened with.
  const verification = verifyCardNumber(number, MAX_CARD_NUMBER_DIGITS);
  const brand = verification.card ? ACCEPTED_CARD_BRANDS[verification.card.type] : undefined;
  if (!verification.isValid) {
    errors.push({
      field: `${fieldPrefix}.number`,
      message: 'is not a valid card number (Luhn check or length failed)',
    });
  } else if (!brand) {
    errors.push({ field: `${fieldPrefix}.number`, message: 'belongs to a card brand we do not accept' });
  }

  const expiryProblem = cardExpiryProblem(card.expiration, now);
  if (expiryProblem) {
    errors.push({ field: `${fieldPrefix}.expiration`, message: EXPIRY_MESSAGES[expiryProblem] });
  }

  if (card.cvv !== undefined && brand) {
    const size = verification.card?.code.size ?? 3;
    // Typed as a string, but the JSON may say null: refused like any other wrong CVV.
    if (typeof card.cvv !== 'string' || card.cvv.length !== size || !/^\d+$/.test(card.cvv)) {
      errors.push({ field: `${fieldPrefix}.cvv`, message: `must be ${size} digits for ${brand}` });
    }
  }
  if (errors.length > 0 || !brand) {
    throw ApiError.invalid(
      `Invalid card: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      errors,
    );
  }
  return { number, brand, expiration: card.expiration, masked: maskCardNumber(number) };
}
