// Money is an integer of minor units (`isoAmount`) plus a currency; the decimal `amount`
// string is derived with the currency's ISO 4217 exponent. All conversions are done on
// digit strings, never by float multiplication (0.29 * 100 = 28.999999999999996).

/**
 * ISO 4217 minor-unit exponents of the active currency codes (list one). Codes without a
 * minor unit (precious metals, XDR, XTS, ...) are not payable and left out. ANG and SLL are
 * kept next to their successors XCG and SLE while issuers still send them.
 */
// prettier-ignore
export const CURRENCY_EXPONENTS = {
  AED: 2, AFN: 2, ALL: 2, AMD: 2, ANG: 2, AOA: 2, ARS: 2, AUD: 2, AWG: 2, AZN: 2,
  BAM: 2, BBD: 2, BDT: 2, BGN: 2, BHD: 3, BIF: 0, BMD: 2, BND: 2, BOB: 2, BOV: 2,
  BRL: 2, BSD: 2, BTN: 2, BWP: 2, BYN: 2, BZD: 2,
  CAD: 2, CDF: 2, CHE: 2, CHF: 2, CHW: 2, CLF: 4, CLP: 0, CNY: 2, COP: 2, COU: 2,
  CRC: 2, CUP: 2, CVE: 2, CZK: 2,
  DJF: 0, DKK: 2, DOP: 2, DZD: 2,
  EGP: 2, ERN: 2, ETB: 2, EUR: 2,
  FJD: 2, FKP: 2,
  GBP: 2, GEL: 2, GHS: 2, GIP: 2, GMD: 2, GNF: 0, GTQ: 2, GYD: 2,
  HKD: 2, HNL: 2, HTG: 2, HUF: 2,
  IDR: 2, ILS: 2, INR: 2, IQD: 3, IRR: 2, ISK: 0,
  JMD: 2, JOD: 3, JPY: 0,
  KES: 2, KGS: 2, KHR: 2, KMF: 0, KPW: 2, KRW: 0, KWD: 3, KYD: 2, KZT: 2,
  LAK: 2, LBP: 2, LKR: 2, LRD: 2, LSL: 2, LYD: 3,
  MAD: 2, MDL: 2, MGA: 2, MKD: 2, MMK: 2, MNT: 2, MOP: 2, MRU: 2, MUR: 2, MVR: 2,
  MWK: 2, MXN: 2, MXV: 2, MYR: 2, MZN: 2,
  NAD: 2, NGN: 2, NIO: 2, NOK: 2, NPR: 2, NZD: 2,
  OMR: 3,
  PAB: 2, PEN: 2, PGK: 2, PHP: 2, PKR: 2, PLN: 2, PYG: 0,
  QAR: 2,
  RON: 2, RSD: 2, RUB: 2, RWF: 0,
  SAR: 2, SBD: 2, SCR: 2, SDG: 2, SEK: 2, SGD: 2, SHP: 2, SLE: 2, SLL: 2, SOS: 2,
  SRD: 2, SSP: 2, STN: 2, SVC: 2, SYP: 2, SZL: 2,
  THB: 2, TJS: 2, TMT: 2, TND: 3, TOP: 2, TRY: 2, TTD: 2, TWD: 2, TZS: 2,
  UAH: 2, UGX: 0, USD: 2, USN: 2, UYI: 0, UYU: 2, UYW: 4, UZS: 2,
  VED: 2, VES: 2, VND: 0, VUV: 0,
  WST: 2,
  XAF: 0, XCD: 2, XCG: 2, XOF: 0, XPF: 0,
  YER: 2,
  ZAR: 2, ZMW: 2, ZWG: 2,
} as const satisfies Record<string, 0 | 2 | 3 | 4>;

/** A known ISO 4217 currency code (uppercase). */
export type CurrencyCode = keyof typeof CURRENCY_EXPONENTS;

/** Every known currency code, alphabetical. */
export const CURRENCY_CODES = Object.freeze(Object.keys(CURRENCY_EXPONENTS) as CurrencyCode[]);

/** Largest `isoAmount` accepted: beyond it a JS number no longer holds every integer. */
export const MAX_ISO_AMOUNT = Number.MAX_SAFE_INTEGER;

/** A decimal amount as the API accepts it: digits, optionally a dot and more digits. */
export const DECIMAL_AMOUNT_PATTERN = /^\d+(\.\d+)?$/;

/** Thrown by the conversions below; `reason` tells the cases apart. */
export class MoneyError extends Error {
  constructor(
    readonly reason: 'unknown-currency' | 'malformed' | 'too-many-decimals' | 'too-large',
    message: string,
  ) {
    super(message);
    this.name = 'MoneyError';
  }
}

/** True for a known currency code; case-sensitive (`eur` is not a currency code). */
export function isKnownCurrency(code: unknown): code is CurrencyCode {
  return typeof code === 'string' && Object.hasOwn(CURRENCY_EXPONENTS, code);
}

/** Number of minor-unit decimals of a currency (EUR 2, JPY 0, KWD 3, CLF 4). */
export function currencyExponent(currency: string): number {
  if (!isKnownCurrency(currency)) {
    throw new MoneyError('unknown-currency', `Unknown currency code "${currency}"`);
  }
  return CURRENCY_EXPONENTS[currency];
}

/**
 * Minor units → decimal string with exactly the currency's decimals:
 * (1000, 'EUR') → "10.00", (1000, 'JPY') → "1000", (1000, 'KWD') → "1.000".
 * Accepts a bigint or an integer string too (PostgreSQL bigint columns arrive as strings).
 */
export function toDecimalAmount(isoAmount: number | bigint | string, currency: string): string {
  const exponent = currencyExponent(currency);
  const digits = integerDigits(isoAmount);
  const negative = digits.startsWith('-');
  const magnitude = negative ? digits.slice(1) : digits;
  const sign = negative ? '-' : '';
  if (exponent === 0) return sign + magnitude;
  const padded = magnitude.padStart(exponent + 1, '0');
  return `${sign}${padded.slice(0, -exponent)}.${padded.slice(-exponent)}`;
}

/**
 * Decimal string → minor units: ("10.5", 'EUR') → 1050. Extra decimals are accepted only
 * when they are zeros ("1000.00" is a valid JPY amount, "10.001" is not a EUR amount).
 * @throws MoneyError on a malformed amount, too many decimals, an unknown currency or a
 * result above {@link MAX_ISO_AMOUNT}.
 */
export function toIsoAmount(decimal: string, currency: string): number {
  const exponent = currencyExponent(currency);
  const match = DECIMAL_AMOUNT_PATTERN.exec(decimal);
  if (!match) {
    throw new MoneyError('malformed', `"${shortened(decimal)}" is not a decimal amount (e.g. "10.00")`);
  }
  const [whole, fraction = ''] = decimal.split('.');
  // Linear scans, never a regular expression like /0+$/ (quadratic on "1.000…0001": seconds of CPU
  // for one request body) nor a BigInt of a megabyte of digits.
  const significant = fraction.slice(0, lastNonZero(fraction) + 1);
  if (significant.length > exponent) {
    throw new MoneyError(
      'too-many-decimals',
      `${currency} amounts have ${exponent} decimal${exponent === 1 ? '' : 's'}; "${shortened(decimal)}" has more`,
    );
  }
  const digits = whole.slice(firstNonZero(whole)) + significant.padEnd(exponent, '0');
  if (digits.length > MAX_ISO_AMOUNT_DIGITS || BigInt(digits) > BigInt(MAX_ISO_AMOUNT)) {
    throw new MoneyError(
      'too-large',
      `"${shortened(decimal)}" ${currency} exceeds the largest supported amount`,
    );
  }
  return Number(digits);
}

const MAX_ISO_AMOUNT_DIGITS = String(MAX_ISO_AMOUNT).length;

/** Index of the first digit that is not a leading zero (the whole string's length when all are). */
function firstNonZero(digits: string): number {
  let i = 0;
  while (i < digits.length && digits.charCodeAt(i) === 48) i++;
  return i;
}

/** Index of the last digit that is not a trailing zero (-1 when all are). */
function lastNonZero(digits: string): number {
  let i = digits.length - 1;
  while (i >= 0 && digits.charCodeAt(i) === 48) i--;
  return i;
}

/** An amount as an error message quotes it: at most 40 characters of it. */
function shortened(decimal: string): string {
  return decimal.length > 40 ? `${decimal.slice(0, 37)}...` : decimal;
}

/** Outcome of {@link reconcileAmounts}. */
export type AmountResolution =
  | { ok: true; isoAmount: number }
  | { ok: false; reason: 'missing' | 'mismatch' | 'invalid'; message: string };

/**
 * Resolves a request that may carry `amount` (decimal string), `isoAmount` (minor units) or
 * both: at least one is required, and when both are sent they must be the same amount.
 */
export function reconcileAmounts(
  input: { amount?: string | null; isoAmount?: number | null },
  currency: string,
): AmountResolution {
  const { amount, isoAmount } = input;
  if (isoAmount != null && !(Number.isSafeInteger(isoAmount) && isoAmount >= 0)) {
    return { ok: false, reason: 'invalid', message: 'isoAmount must be a non-negative integer' };
  }
  if (amount == null) {
    return isoAmount == null
      ? { ok: false, reason: 'missing', message: 'Either amount or isoAmount is required' }
      : { ok: true, isoAmount };
  }
  let fromDecimal: number;
  try {
    fromDecimal = toIsoAmount(amount, currency);
  } catch (error) {
    if (error instanceof MoneyError) return { ok: false, reason: 'invalid', message: error.message };
    throw error;
  }
  if (isoAmount != null && isoAmount !== fromDecimal) {
    return {
      ok: false,
      reason: 'mismatch',
      message: `amount "${amount}" and isoAmount ${isoAmount} differ (${amount} ${currency} is ${fromDecimal} minor units)`,
    };
  }
  return { ok: true, isoAmount: fromDecimal };
}

function integerDigits(value: number | bigint | string): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new MoneyError('malformed', `isoAmount ${value} is not a safe integer`);
    }
    return value.toString();
  }
  if (typeof value === 'bigint') return value.toString();
  if (!/^-?\d+$/.test(value)) {
    throw new MoneyError('malformed', `isoAmount "${value}" is not an integer`);
  }
  return BigInt(value).toString(); // normalises leading zeros
}
