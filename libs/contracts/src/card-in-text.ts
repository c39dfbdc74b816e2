import validator from 'validator';
import { GUID_PATTERN } from './ids.js';

/**
 * A run of 13 to 19 digits, grouped or not by single spaces or dashes ("4111 1111 1111 1111"),
 * standing alone: a longer run of digits is some other number.
 */
const DIGIT_RUN = /(?<![\d])\d(?:[ -]?\d){12,18}(?![ -]?\d)/g;

/**
 * A GUID anywhere in the text, in any case (the shape of GUID_PATTERN): merchants' references often
 * are one, and its dash-joined groups can read as a Luhn-valid digit run ("…5-4917-8329-8173…",
 * about one GUID in 5,500). It is never a card.
 */
const GUID = new RegExp(GUID_PATTERN.source.replace(/^\^|\$$/g, ''), 'gi');

/**
 * True when free text holds what looks like a card number: a digit run that has a card network's
 * shape and passes the Luhn check (validator.js isCreditCard). Card data typed into a reference, a
 * name or metadata would otherwise be stored and published in clear, out of the vault's reach.
 */
export function containsCardNumber(text: string): boolean {
  for (const [run] of text.replace(GUID, ' ').matchAll(DIGIT_RUN)) {
    if (validator.isCreditCard(run.replace(/[ -]/g, ''))) return true;
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
