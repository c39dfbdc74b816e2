// Amounts and dates in the shopper's language.
import { hostedFormLanguageTag, type HostedFormLocale } from '@byrd/contracts/browser';

/** "€25.00" (en-US), "25,00 €" (pt-PT) for the decimal string the API sends. */
export function formatAmount(amount: string, currency: string, locale: HostedFormLocale): string {
  try {
    // A decimal string is formatted exactly (Intl.NumberFormat v3), with the currency's own digits.
    return new Intl.NumberFormat(hostedFormLanguageTag(locale), { style: 'currency', currency }).format(
      amount as Intl.StringNumericLiteral,
    );
  } catch {
    return `${amount} ${currency}`;
  }
}

export function formatDateTime(iso: string, locale: HostedFormLocale): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(hostedFormLanguageTag(locale), {
    dateStyle: 'long',
    timeStyle: 'short',
  }).format(date);
}

/** Multibanco references read in groups of three: "123 456 789". */
export function groupDigits(value: string, size = 3): string {
  return value.replace(new RegExp(`(\\d{${size}})(?=\\d)`, 'g'), '$1 ');
}

/** "+351 912 345 678" for an E.164 Portuguese mobile; other numbers as given. */
export function formatPhone(e164: string): string {
  const portuguese = /^\+351(\d{9})$/.exec(e164);
  return portuguese ? `+351 ${groupDigits(portuguese[1])}` : e164;
}
