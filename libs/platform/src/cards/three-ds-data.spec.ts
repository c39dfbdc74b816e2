import { randomBytes, randomUUID } from 'node:crypto';
import type { CardBrand } from '@byrd/contracts';
import { ApiError } from '../errors/index.js';
import { checkThreeDSData, eciFor, eciLevel, isBase64Of20Bytes } from './three-ds-data.js';

const AAV = 'AAABBEg0VhI0VniQEjRWAAAAAAA=';

const errorsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('BYRD900');
    return (error as ApiError).errors ?? [];
  }
  throw new Error('expected a 400');
};

describe('ECI by brand', () => {
  it.each<[CardBrand, string, string, string]>([
    ['VISA', '05', '06', '07'],
    ['AMEX', '05', '06', '07'],
    ['JCB', '05', '06', '07'],
    ['DINERS', '05', '06', '07'],
    ['DISCOVER', '05', '06', '07'],
    ['UNIONPAY', '05', '06', '07'],
    ['ELO', '05', '06', '07'],
    ['MASTER', '02', '01', '00'],
    ['MAESTRO', '02', '01', '00'],
  ])('%s: %s authenticated, %s attempted, %s not', (brand, authenticated, attempted, none) => {
    expect(eciLevel(brand, authenticated)).toBe('authenticated');
    expect(eciLevel(brand, attempted)).toBe('attempted');
    expect(eciLevel(brand, none)).toBe('none');
    expect([eciFor(brand, 'authenticated'), eciFor(brand, 'attempted'), eciFor(brand, 'none')]).toEqual([
      authenticated,
      attempted,
      none,
    ]);
  });

  it("refuses another brand's values and anything else", () => {
    expect(eciLevel('VISA', '02')).toBeNull();
    expect(eciLevel('MASTER', '05')).toBeNull();
    expect(eciLevel('VISA', '5')).toBeNull();
    expect(eciLevel('VISA', 'ZZ')).toBeNull();
    expect(eciLevel('VISA', 'toString')).toBeNull();
  });
});

describe('isBase64Of20Bytes', () => {
  it('accepts 20 bytes in base64, as issuers produce them', () => {
    expect(isBase64Of20Bytes(AAV)).toBe(true);
    expect(isBase64Of20Bytes('AAACAgSRBklmQCFgMpEGAAAAAAA=')).toBe(true);
    for (let i = 0; i < 50; i++) expect(isBase64Of20Bytes(randomBytes(20).toString('base64'))).toBe(true);
  });

  it.each([
    ['blank', ' '],
    ['too short', 'AAAB'],
    ['19 bytes', randomBytes(19).toString('base64')],
    ['21 bytes', randomBytes(21).toString('base64')],
    ['no padding', AAV.slice(0, -1)],
    ['base64url alphabet', 'AAABBEg0VhI0VniQEjRW-_AAAAA='],
    ['non-canonical last character', 'AAABBEg0VhI0VniQEjRWAAAAAAB='],
    ['40 hex digits', 'a'.repeat(40)],
  ])('refuses %s', (_, value) => {
    expect(isBase64Of20Bytes(value)).toBe(false);
  });
});

describe('checkThreeDSData', () => {
  it('is "not sent" without data (empty strings and nulls are absent)', () => {
    expect(checkThreeDSData({}, 'VISA')).toEqual({ sent: false, verified: false });
    expect(checkThreeDSData({ aav: '', eci: null, xid: '', dsTransactionId: undefined }, 'VISA')).toEqual({
      sent: false,
      verified: false,
    });
  });

  it('verifies an authenticated or attempted ECI with a well-formed AAV', () => {
    expect(
      checkThreeDSData({ aav: AAV, eci: '05', dsTransactionId: randomUUID().toUpperCase() }, 'VISA'),
    ).toEqual({ sent: true, level: 'authenticated', verified: true });
    expect(checkThreeDSData({ aav: AAV, eci: '01', xid: AAV }, 'MASTER')).toEqual({
      sent: true,
      level: 'attempted',
      verified: true,
    });
  });

  it('does not count a "not authenticated" ECI (07 / 00) as a verification, and needs no AAV for it', () => {
    expect(checkThreeDSData({ eci: '07' }, 'VISA')).toEqual({ sent: true, level: 'none', verified: false });
    expect(checkThreeDSData({ eci: '00', aav: AAV }, 'MAESTRO')).toEqual({
      sent: true,
      level: 'none',
      verified: false,
    });
  });

  it('refuses junk, naming each field under the prefix', () => {
    expect(errorsOf(() => checkThreeDSData({ aav: ' ', eci: 'ZZ' }, 'MASTER', 'Card'))).toEqual([
      {
        field: 'Card.eci',
        message: 'must be 02 (authenticated), 01 (attempted) or 00 (not authenticated) for a MASTER card',
      },
      { field: 'Card.aav', message: expect.stringContaining('20-byte CAVV/AAV in base64') },
    ]);
    expect(
      errorsOf(() =>
        checkThreeDSData({ aav: AAV, eci: '05', dsTransactionId: 'not-a-uuid', xid: 'abc' }, 'VISA', 'Card'),
      ).map((e) => e.field),
    ).toEqual(['Card.dsTransactionId', 'Card.xid']);
  });

  it("refuses an ECI of the other brand's family", () => {
    expect(errorsOf(() => checkThreeDSData({ aav: AAV, eci: '02' }, 'VISA'))).toEqual([
      {
        field: 'card.eci',
        message: 'must be 05 (authenticated), 06 (attempted) or 07 (not authenticated) for a VISA card',
      },
    ]);
  });

  it('needs the ECI with any 3DS data, and the AAV unless the ECI says "not authenticated"', () => {
    expect(errorsOf(() => checkThreeDSData({ aav: AAV }, 'VISA'))).toEqual([
      { field: 'card.eci', message: 'is required with 3DS authentication data' },
    ]);
    expect(errorsOf(() => checkThreeDSData({ eci: '05' }, 'VISA'))).toEqual([
      { field: 'card.aav', message: 'is required with 3DS authentication data' },
    ]);
    expect(
      errorsOf(() => checkThreeDSData({ dsTransactionId: randomUUID() }, 'VISA')).map((e) => e.field),
    ).toEqual(['card.eci', 'card.aav']);
  });
});
