import { acceptedCardBrand } from './card-number.js';
import { GUID_PATTERN } from './ids.js';

/**
 * A run of 12 (Maestro's shortest) to 19 digits, grouped or not by single spaces or dashes
 * ("4111 1111 1111 1111"), standing alone: a longer run of digits is some other number.
 */
const DIGIT_RUN = /(?<!\d)\d(?:[ -]?\d){11,18}(?![ -]?\d)/g;

/** E.164: a phone number in international form ("+57 300 123 4567") has at most 15 digits. */
const MAX_PHONE_DIGITS = 15;

/**
 * A GUID anywhere in the text, in any case (the shape of GUID_PATTERN): merchants' references often
 * are one, and its dash-joined groups can read as a Luhn-valid digit run ("…5-4917-8329-8173…",
 * about one GUID in 5,500). It is never a card.
 */
const GUID = new RegExp(GUID_PATTERN.source.replace(/^\^|\$$/g, ''), 'gi');

/**
 * True when free text holds a card number: a digit run the platform's card checks would take as
 * one (acceptedCardBrand: a brand we accept, one of its lengths, Luhn where it applies). Card data
 * typed into a reference, a name or metadata would otherwise be stored and published in clear, out
 * of the vault's reach.
 */
export function containsCardNumber(text: string): boolean {
  const withoutGuids = text.replace(GUID, ' ');
  for (const { 0: run, index } of withoutGuids.matchAll(DIGIT_RUN)) {
    const digits = run.replace(/[ -]/g, '');
    // After a "+", a phone number (which may pass for a Maestro one), unless too long for one.
    if (withoutGuids[index - 1] === '+' && digits.length <= MAX_PHONE_DIGITS) continue;
    if (acceptedCardBrand(digits)) return true;
  }
  return false;
}

/**
 * The dotted paths of every value inside a JSON value that holds a card number ('' for the value
 * itself): strings, integers (a card number sent as a JSON number is stored all the same) and keys
 * (stored and echoed like values; named `<key>` so the error never repeats the number).
 */
export function cardNumberPaths(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return containsCardNumber(value) ? [path] : [];
  if (typeof value === 'number')
    return Number.isInteger(value) && containsCardNumber(String(value)) ? [path] : [];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const at = path ? `${path}.${key}` : key;
    if (containsCardNumber(key)) return [path ? `${path}.<key>` : '<key>'];
    return cardNumberPaths(child, at);
  });
}
