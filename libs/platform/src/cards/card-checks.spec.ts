import { containsCardNumber } from '@byrd/contracts';
import { ApiError } from '../errors/index.js';
import { checkCard, maskCardNumber } from './card-checks.js';

const now = new Date('2026-11-22T00:00:00Z');
const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    return ((error as ApiError).errors ?? []).map((e) => e.field);
  }
  return [];
};

describe('checkCard', () => {
  it.each([
    ['5448280000000007', 'MASTER'],
    ['4242424242424242', 'VISA'],
    ['2720290928104209', 'MASTER'],
    ['378282246310005', 'AMEX'],
    ['6011111111111117', 'DISCOVER'],
    ['3530111333300000', 'JCB'],
    ['36227206271667', 'DINERS'],
  ])('recognises %s as %s', (number, brand) => {
    const cvv = brand === 'AMEX' ? '1234' : '123';
    expect(checkCard({ number, expiration: '12/30', cvv }, now).brand).toBe(brand);
  });

  it('masks all but the first six and last four digits', () => {
    expect(checkCard({ number: '5448 2800 0000 0007', expiration: '12/30', cvv: '123' }, now).masked).toBe(
      '544828******0007',
    );
    expect(maskCardNumber('378282246310005')).toBe('378282*****0005');
  });

  it('keeps five digits hidden in numbers shorter than 15 (Maestro 12 to 14 digits)', () => {
    expect(maskCardNumber('501800000009')).toBe('501*****0009');
    expect(maskCardNumber('5018000000001')).toBe('5018*****0001');
    expect(maskCardNumber('50180000000002')).toBe('50180*****0002');
    for (const length of [12, 13, 14, 15, 16, 19]) {
      const masked = maskCardNumber('6'.repeat(length));
      expect(masked).toHaveLength(length);
      expect(masked.replace(/[^*]/g, '').length).toBeGreaterThanOrEqual(5);
    }
  });

  it('names each failing field', () => {
    expect(
      fieldsOf(() => checkCard({ number: '4242424242424241', expiration: '12/30', cvv: '123' }, now)),
    ).toEqual(['card.number']);
    expect(
      fieldsOf(() => checkCard({ number: '4242424242424242', expiration: '10/26', cvv: '123' }, now)),
    ).toEqual(['card.expiration']);
    expect(
      fieldsOf(() => checkCard({ number: '4242424242424242', expiration: '13/30', cvv: '123' }, now)),
    ).toEqual(['card.expiration']);
    expect(
      fieldsOf(() => checkCard({ number: '378282246310005', expiration: '12/30', cvv: '123' }, now)),
    ).toEqual(['card.cvv']);
    expect(
      fieldsOf(() => checkCard({ number: '4242424242424242', expiration: '12/30', cvv: '1234' }, now)),
    ).toEqual(['card.cvv']);
    for (const cvv of [null, '12a', '١٢٣']) {
      const input = { number: '4242424242424242', expiration: '12/30', cvv: cvv as string };
      expect(fieldsOf(() => checkCard(input, now))).toEqual(['card.cvv']);
    }
  });

  it('accepts a card expiring this month', () => {
    expect(() =>
      checkCard({ number: '4242424242424242', expiration: '11/26', cvv: '123' }, now),
    ).not.toThrow();
  });

  it('takes as a card number exactly what free text is screened for (containsCardNumber)', () => {
    const luhnDigit = (body: string) => {
      let sum = 0;
      for (let i = 0; i < body.length; i++) {
        let digit = Number(body[body.length - 1 - i]);
        if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
        sum += digit;
      }
      return String((10 - (sum % 10)) % 10);
    };
    // A BIN of each brand (accepted or not) and some of no brand, at every length around 12 to 19.
    const prefixes = [
      '4',
      '51',
      '2221',
      '34',
      '36',
      '6011',
      '3528',
      '5018',
      '63',
      '6062',
      '636368',
      '506717',
    ];
    prefixes.push('62', '6212', '81', '9792', '2200', '1', '7', '0');
    const numbers = prefixes.flatMap((prefix) =>
      [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20].flatMap((length) => {
        const body = prefix.padEnd(length - 1, '7').slice(0, length - 1);
        return [body + luhnDigit(body), body + ((Number(luhnDigit(body)) + 1) % 10)];
      }),
    );
    const accepted = (number: string) =>
      !fieldsOf(() => checkCard({ number, expiration: '12/30' }, now)).length;
    const differences = numbers.filter((number) => containsCardNumber(number) !== accepted(number));
    expect(numbers.filter(accepted).length).toBeGreaterThan(40);
    expect(differences).toEqual([]);
  });
});
