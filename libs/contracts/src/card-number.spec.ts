import valid from 'card-validator';
import creditCardType from 'credit-card-type';
import { verifyCardNumber } from './card-number.js';

/** The digit that makes `body` pass the Luhn check. */
function luhnDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Every BIN pattern credit-card-type knows: each single prefix, each range's ends and middle. */
function knownPrefixes(): string[] {
  const prefixes = new Set<string>(['0', '1', '9', '99999999']);
  for (const type of Object.values(creditCardType.types)) {
    for (const pattern of creditCardType.getTypeInfo(type).patterns) {
      if (Array.isArray(pattern)) {
        const [low, high] = pattern;
        for (const value of [low, high, Math.floor((low + high) / 2), low - 1, high + 1])
          prefixes.add(String(value));
      } else prefixes.add(String(pattern));
    }
  }
  return [...prefixes];
}

describe('verifyCardNumber', () => {
  it("gives card-validator's answer (brand and validity) for every known BIN, length and check digit", () => {
    let seed = 42;
    const randomDigits = (count: number) =>
      Array.from({ length: count }, () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return String(seed % 10);
      }).join('');
    const numbers: string[] = ['', '4', '42', 'abc', '４２４２', '4242x42424242424'];
    for (const prefix of knownPrefixes()) {
      for (let length = Math.max(prefix.length, 1); length <= 21; length++) {
        const body = (prefix + randomDigits(length)).slice(0, length - 1);
        numbers.push(body + luhnDigit(body), body + ((Number(luhnDigit(body)) + 1) % 10));
      }
    }
    const differences = numbers
      .map((number) => {
        const ours = verifyCardNumber(number, 19);
        const theirs = valid.number(number, { maxLength: 19 });
        return {
          number,
          ours: { type: ours.card?.type ?? null, isValid: ours.isValid },
          theirs: { type: theirs.card?.type ?? null, isValid: theirs.isValid },
        };
      })
      .filter(({ ours, theirs }) => JSON.stringify(ours) !== JSON.stringify(theirs));
    expect(numbers.length).toBeGreaterThan(2_000);
    expect(differences).toEqual([]);
  });

  it('answers from the first 8 digits, whatever the rest', () => {
    expect(verifyCardNumber('4242424242424242', 19)).toMatchObject({ card: { type: 'visa' }, isValid: true });
    expect(verifyCardNumber('4242424242424241', 19)).toMatchObject({
      card: { type: 'visa' },
      isValid: false,
    });
    expect(verifyCardNumber('6508370012345678', 19).card?.type).toBe('troy');
    expect(verifyCardNumber('6508370512345678', 19).card?.type).not.toBe('troy');
  });
});
