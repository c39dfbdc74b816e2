import creditCardType from 'credit-card-type';
import type { CreditCardType } from 'credit-card-type/dist/types.js';
import luhn10 from 'card-validator/dist/luhn-10.js';
import type { CardBrand } from './enums.js';

/** The longest card number any brand issues. */
export const MAX_CARD_NUMBER_DIGITS = 19;

/** credit-card-type names (used by card-validator) → the gateway's brand values: the brands we accept. */
export const ACCEPTED_CARD_BRANDS: Readonly<Record<string, CardBrand>> = {
  visa: 'VISA',
  mastercard: 'MASTER',
  'american-express': 'AMEX',
  'diners-club': 'DINERS',
  discover: 'DISCOVER',
  jcb: 'JCB',
  maestro: 'MAESTRO',
  unionpay: 'UNIONPAY',
  elo: 'ELO',
  hipercard: 'HIPERCARD',
};

/**
 * credit-card-type's longest BIN pattern has 8 digits (Troy's 65083700-65083704), so a number's
 * brand is that of its first 8 digits. The library clones every matching brand's configuration on
 * each call (~12 µs a payment); the answers per prefix are kept instead, a bounded number of them.
 * Only for numbers of 16 digits or more, whose first 8 PCI DSS lets anyone see; a shorter number's
 * first 8 with the masked form we keep (first 6, last 4) would be most of it.
 */
const BRAND_PREFIX_DIGITS = 8;
const KEPT_FROM_LENGTH = 16;
const MAX_PREFIXES = 10_000;
const brandsByPrefix = new Map<string, CreditCardType[]>();

function brandsOf(digits: string): CreditCardType[] {
  if (digits.length < KEPT_FROM_LENGTH) return creditCardType(digits);
  const prefix = digits.slice(0, BRAND_PREFIX_DIGITS);
  let brands = brandsByPrefix.get(prefix);
  if (!brands) {
    brands = creditCardType(prefix);
    if (brandsByPrefix.size >= MAX_PREFIXES) brandsByPrefix.delete(brandsByPrefix.keys().next().value!);
    brandsByPrefix.set(prefix, brands);
  }
  return brands;
}

export interface CardNumberVerification {
  /** The one brand the number belongs to (shared: read it, never change it), or null. */
  card: Readonly<CreditCardType> | null;
  isValid: boolean;
}

/**
 * card-validator's `number(digits, { maxLength })`, `card` and `isValid` alike (a test holds the two
 * to the same answers): one brand by BIN, a length that brand issues, the Luhn check (except
 * UnionPay, whose numbers need not pass it).
 */
export function verifyCardNumber(digits: string, maxLength: number): CardNumberVerification {
  if (!/^\d*$/.test(digits)) return { card: null, isValid: false };
  const brands = brandsOf(digits);
  if (brands.length !== 1) return { card: null, isValid: false };
  const card = brands[0];
  if (digits.length > maxLength) return { card, isValid: false };
  const passesLuhn = card.type === creditCardType.types.UNIONPAY || luhn10(digits);
  return { card, isValid: passesLuhn && card.lengths.includes(digits.length) };
}

const UNIONPAY_LENGTHS = new Set(creditCardType.getTypeInfo(creditCardType.types.UNIONPAY).lengths);

/**
 * The brand the platform's card checks take `digits` for (a brand we accept, a length it issues,
 * Luhn where it applies), or undefined when they would refuse it as a card number.
 */
export function acceptedCardBrand(digits: string): CardBrand | undefined {
  // Luhn first, for free text (nine digit runs in ten fail it): the brand lookup of a number under
  // 16 digits costs ~10 µs, and a number failing Luhn can only pass as UnionPay (14 to 19 digits).
  if (!UNIONPAY_LENGTHS.has(digits.length) && !luhn10(digits)) return undefined;
  const { card, isValid } = verifyCardNumber(digits, MAX_CARD_NUMBER_DIGITS);
  return isValid && card ? ACCEPTED_CARD_BRANDS[card.type] : undefined;
}
