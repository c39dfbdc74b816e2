import type { CardBrand } from '@byrd/contracts';
import { ApiError, type FieldError } from '../errors/index.js';

/** What an ECI says about the cardholder's authentication. */
export type EciLevel = 'authenticated' | 'attempted' | 'none';

/**
 * ECI values by brand (EMV 3DS, API-FACTS): Mastercard and Maestro use 02 / 01 / 00, every other
 * brand (Visa, Amex, JCB, Diners, Discover, UnionPay, Elo; Hipercard too, **decision**: it follows the
 * Visa-style values) 05 / 06 / 07, for authenticated / attempted / not authenticated.
 */
const MASTERCARD_STYLE: Readonly<Record<string, EciLevel>> = {
  '02': 'authenticated',
  '01': 'attempted',
  '00': 'none',
};
const VISA_STYLE: Readonly<Record<string, EciLevel>> = {
  '05': 'authenticated',
  '06': 'attempted',
  '07': 'none',
};
const MASTERCARD_LIKE: readonly CardBrand[] = ['MASTER', 'MAESTRO'];

function eciTable(brand: CardBrand): Readonly<Record<string, EciLevel>> {
  return MASTERCARD_LIKE.includes(brand) ? MASTERCARD_STYLE : VISA_STYLE;
}

/** The level an ECI means for the brand, or null when it is not one of the brand's values. */
export function eciLevel(brand: CardBrand, eci: string): EciLevel | null {
  return Object.hasOwn(eciTable(brand), eci) ? eciTable(brand)[eci] : null;
}

/** The brand's ECI for a level (`05` / `02` authenticated, ...). */
export function eciFor(brand: CardBrand, level: EciLevel): string {
  const table = eciTable(brand);
  return Object.keys(table).find((eci) => table[eci] === level)!;
}

/** The brand's ECI values, for messages: `05 (authenticated), 06 (attempted) or 07 (not authenticated)`. */
function describeEcis(brand: CardBrand): string {
  const words: Record<EciLevel, string> = {
    authenticated: 'authenticated',
    attempted: 'attempted',
    none: 'not authenticated',
  };
  const parts = Object.entries(eciTable(brand)).map(([eci, level]) => `${eci} (${words[level]})`);
  return `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

// 20 bytes in standard base64: 26 free characters, a 27th carrying 2 bits (the other 4 zero), one `=`.
const BASE64_20_BYTES = /^[A-Za-z0-9+/]{26}[AEIMQUYcgkosw048]=$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A CAVV / AAV (EMV 3DS authentication value) or a 3DS 1 XID: 20 bytes, base64-encoded
 * (28 characters, e.g. `AAABBEg0VhI0VniQEjRWAAAAAAA=`).
 */
export function isBase64Of20Bytes(value: string): boolean {
  return BASE64_20_BYTES.test(value);
}

/** 3DS data a merchant sends with a card it authenticated itself. */
export interface ThreeDSDataInput {
  aav?: string | null;
  eci?: string | null;
  dsTransactionId?: string | null;
  xid?: string | null;
}

/**
 * Outcome of {@link checkThreeDSData}: `verified` only when the data proves an authentication (or an
 * attempt, which shifts liability just the same); a well-formed "not authenticated" ECI (07 / 00) is
 * `sent` but not `verified`, as if no data had been sent.
 */
export type ThreeDSDataCheck =
  { sent: false; verified: false } | { sent: true; level: EciLevel; verified: boolean };

const present = (value: string | null | undefined): value is string => value != null && value !== '';

/**
 * Checks the 3DS data sent with a card of `brand`, not just its presence: `eci` one of the brand's
 * values, `aav` (required unless the ECI says "not authenticated") and `xid` 20 bytes in base64,
 * `dsTransactionId` a UUID. Empty strings count as absent (clients send them for absent fields).
 * Anything malformed is a 400 BYRD900 naming each field (`Card.eci`, `Card.aav`, ...).
 */
export function checkThreeDSData(
  data: ThreeDSDataInput,
  brand: CardBrand,
  fieldPrefix = 'card',
): ThreeDSDataCheck {
  const { aav, eci, dsTransactionId, xid } = data;
  if (![aav, eci, dsTransactionId, xid].some(present)) return { sent: false, verified: false };

  const errors: FieldError[] = [];
  const field = (name: keyof ThreeDSDataInput) => `${fieldPrefix}.${name}`;
  const level = present(eci) ? eciLevel(brand, eci) : null;
  if (!present(eci)) {
    errors.push({ field: field('eci'), message: 'is required with 3DS authentication data' });
  } else if (!level) {
    errors.push({ field: field('eci'), message: `must be ${describeEcis(brand)} for a ${brand} card` });
  }
  if (present(aav)) {
    if (!isBase64Of20Bytes(aav)) {
      errors.push({
        field: field('aav'),
        message: 'must be the 20-byte CAVV/AAV in base64 (28 characters, e.g. AAABBEg0VhI0VniQEjRWAAAAAAA=)',
      });
    }
  } else if (level !== 'none') {
    errors.push({ field: field('aav'), message: 'is required with 3DS authentication data' });
  }
  if (present(dsTransactionId) && !UUID.test(dsTransactionId)) {
    errors.push({
      field: field('dsTransactionId'),
      message: 'must be a UUID (the 3DS directory server transaction id)',
    });
  }
  if (present(xid) && !isBase64Of20Bytes(xid)) {
    errors.push({ field: field('xid'), message: 'must be the 20-byte 3DS 1 XID in base64 (28 characters)' });
  }
  if (errors.length > 0 || !level) {
    throw ApiError.invalid(
      `Invalid 3DS data: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      errors,
    );
  }
  return { sent: true, level, verified: level !== 'none' };
}
