import { amountOutcome, sandboxCard } from './sandbox-rules.js';

describe('sandbox amount rules', () => {
  it.each([
    ['Payment', 1, 'Denied'],
    ['Payment', 1000, 'Denied'],
    ['Payment', 1001, 'TemporaryFailed'],
    ['Payment', 1002, 'Error'],
    ['Payment', 1100, 'Success'],
    ['PreAuth', 1001, 'TemporaryFailed'],
    ['Capture', 2000, 'Denied'],
    ['Capture', 2001, 'TemporaryFailed'],
    ['Capture', 2002, 'Error'],
    ['Capture', 2100, 'Success'],
    ['Refund', 3000, 'Denied'],
    ['Refund', 3001, 'TemporaryFailed'],
    ['Refund', 3002, 'Error'],
    ['Refund', 3100, 'Success'],
    ['Release', 1, 'Success'],
  ] as const)('%s of %i EUR cents → %s', (operation, isoAmount, outcome) => {
    expect(amountOutcome(operation, isoAmount, 'EUR')).toBe(outcome);
  });

  it('compares in the currency exponent (JPY 0, KWD 3)', () => {
    expect(amountOutcome('Payment', 10, 'JPY')).toBe('Denied');
    expect(amountOutcome('Payment', 11, 'JPY')).toBe('Success');
    expect(amountOutcome('Payment', 10_010, 'KWD')).toBe('TemporaryFailed');
  });

  it('knows the test cards and leaves others to the amount rules', () => {
    expect(sandboxCard('5555341244441115')).toEqual({ threeDS: 'challenge' });
    expect(sandboxCard('4000000000000002').outcome).toBe('Denied');
    expect(sandboxCard('5105105105105100')).toEqual({ threeDS: 'frictionless' });
  });
});
