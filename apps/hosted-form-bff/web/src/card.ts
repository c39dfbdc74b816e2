// Card number, expiry and security code: formatting as the shopper types and the checks the page
// makes before sending anything (Luhn and length by brand, expiry not in the past, CVV length).
import { cardNumber } from 'card-validator/dist/card-number.js';
import { cardExpiryProblem } from '@byrd/contracts/browser';

export interface CardInfo {
  /** card-validator's id ("visa", "mastercard", "american-express"...), null while unknown. */
  type: string | null;
  /** Display name ("Visa", "Mastercard"...). */
  name: string | null;
  /** Positions of the spaces in the formatted number. */
  gaps: number[];
  /** Longest number the brand issues. */
  maxLength: number;
  /** Digits of the security code. */
  cvvSize: number;
}

const UNKNOWN: CardInfo = { type: null, name: null, gaps: [4, 8, 12], maxLength: 19, cvvSize: 3 };

export function describeCard(digits: string): CardInfo {
  const card = digits ? cardNumber(digits).card : null;
  if (!card) return UNKNOWN;
  return {
    type: card.type,
    name: card.niceType,
    gaps: card.gaps,
    maxLength: Math.max(...card.lengths),
    cvvSize: card.code.size,
  };
}

export function onlyDigits(value: string): string {
  return value.replace(/\D/g, '');
}

/** "4242 4242 4242 4242", "3782 822463 10005" (the brand's own grouping). */
export function formatCardNumber(digits: string, info: CardInfo): string {
  let formatted = '';
  for (let index = 0; index < digits.length; index++) {
    if (info.gaps.includes(index)) formatted += ' ';
    formatted += digits[index];
  }
  return formatted;
}

export type NumberProblem = 'required' | 'invalid';
export function checkNumber(digits: string): NumberProblem | null {
  if (!digits) return 'required';
  return cardNumber(digits).isValid ? null : 'invalid';
}

/** "MM/YY" as the shopper types: digits only, the slash added, "4" → "04/", autofill "12/2030" → "12/30". */
export function formatExpiryInput(raw: string, deleting: boolean): string {
  const slashed = /^\s*(\d{1,2})\s*\/\s*(\d{0,4})\s*$/.exec(raw);
  let month: string;
  let year: string;
  if (slashed) {
    month = slashed[1].length === 1 && !deleting && slashed[2] ? `0${slashed[1]}` : slashed[1];
    year = slashed[2].length === 4 ? slashed[2].slice(2) : slashed[2].slice(0, 2);
  } else {
    let digits = onlyDigits(raw);
    if (digits.length === 6 && /^(0[1-9]|1[0-2])20\d\d$/.test(digits))
      digits = digits.slice(0, 2) + digits.slice(4);
    if (/^[2-9]$/.test(digits[0] ?? '')) digits = `0${digits}`;
    month = digits.slice(0, 2);
    year = digits.slice(2, 4);
  }
  if (year) return `${month}/${year}`;
  return month.length === 2 && !deleting ? `${month}/` : month;
}

export type ExpiryProblem = 'required' | 'invalid' | 'past';
/** The servers' expiry rule (contracts' card-expiry.ts), worded for the field. */
export function checkExpiry(value: string, now = new Date()): ExpiryProblem | null {
  const trimmed = value.trim();
  if (!trimmed) return 'required';
  const problem = cardExpiryProblem(trimmed, now);
  if (problem === 'expired') return 'past';
  return problem ? 'invalid' : null;
}

export type CvvProblem = 'required' | 'length';
export function checkCvv(value: string, size: number): CvvProblem | null {
  if (!value) return 'required';
  return new RegExp(`^\\d{${size}}$`).test(value) ? null : 'length';
}

/** Masked form of the number for the "card saved" message: "•••• 4242". */
export function lastFour(masked: string): string {
  const digits = onlyDigits(masked);
  return `•••• ${digits.slice(-4)}`;
}
