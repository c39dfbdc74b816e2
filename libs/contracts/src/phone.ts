// Phone numbers of MB WAY payments. MB WAY identifies the shopper by the mobile number their
// app is registered with; the request must reach that exact number, so it is normalised to E.164.

/** Portuguese mobile numbers: 9 digits starting 91, 92, 93 or 96. */
const PORTUGUESE_MOBILE = /^9[1236]\d{7}$/;
/** E.164: "+", a country code not starting with 0, at most 15 digits in all. */
const E164 = /^\+[1-9]\d{7,14}$/;
/** Separators people type inside numbers. */
const SEPARATORS = /[\s\-.()]/g;
/** The SIBS wire form, "351#912345678". */
const SIBS_FORM = /^(\d{1,3})#(\d{4,14})$/;

/**
 * The E.164 form (`+351912345678`) of a phone number MB WAY can reach, or null. Accepts a
 * Portuguese mobile with or without +351/00351 ("912 345 678", "+351 912345678"), the SIBS
 * form "351#912345678", and international numbers in E.164 ("+44 7700 900123", "0044...").
 * A +351 number must be a mobile: MB WAY cannot reach a landline.
 */
export function normalizeMbWayPhone(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  let phone = value.trim().replace(SEPARATORS, '');
  const sibs = SIBS_FORM.exec(phone);
  if (sibs) phone = `+${sibs[1]}${sibs[2]}`;
  if (phone.startsWith('00')) phone = `+${phone.slice(2)}`;
  else if (/^351\d{9}$/.test(phone)) phone = `+${phone}`; // the Portuguese code typed without "+"
  if (PORTUGUESE_MOBILE.test(phone)) return `+351${phone}`;
  if (!E164.test(phone)) return null;
  if (phone.startsWith('+351')) return PORTUGUESE_MOBILE.test(phone.slice(4)) ? phone : null;
  return phone;
}
