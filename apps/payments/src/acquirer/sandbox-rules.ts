import { currencyExponent } from '@byrd/contracts';
import type { AcquirerOutcome } from './acquirer.js';

/** How a sandbox test card behaves (API-FACTS.md "Sandbox behaviour"). */
export interface SandboxCard {
  threeDS: 'frictionless' | 'challenge' | 'not-enrolled' | 'unauthorized';
  /** The authorisation outcome the card forces; absent → the amount rules decide. */
  outcome?: AcquirerOutcome;
}

export const SANDBOX_CARDS: Readonly<Record<string, SandboxCard>> = {
  '5448280000000007': { threeDS: 'frictionless', outcome: 'Success' },
  '4200000000000000': { threeDS: 'frictionless', outcome: 'Success' },
  '4242424242424242': { threeDS: 'frictionless', outcome: 'Success' },
  '5555341244441115': { threeDS: 'challenge' },
  '4000000000003220': { threeDS: 'challenge' },
  '4000000000000119': { threeDS: 'frictionless', outcome: 'Error' },
  '5201282999005515': { threeDS: 'frictionless', outcome: 'TemporaryFailed' },
  '5505772716954642': { threeDS: 'not-enrolled' },
  '2720290928104209': { threeDS: 'unauthorized', outcome: 'Denied' },
  '4000000000000002': { threeDS: 'frictionless', outcome: 'Denied' },
};

/** Any other valid card authenticates frictionlessly and is decided by the amount rules. */
export function sandboxCard(number: string): SandboxCard {
  return SANDBOX_CARDS[number] ?? { threeDS: 'frictionless' };
}

/** Upper bounds (in hundredths of the major unit) of the denied range, then timeout, then error. */
const AMOUNT_RULES = {
  Payment: 1000,
  PreAuth: 1000,
  Capture: 2000,
  Refund: 3000,
} as const;

/**
 * Sandbox amount rules: e.g. for a payment 0.01–10.00 is denied, 10.01 times out, 10.02 errors and
 * anything above succeeds. Compared exactly, in any currency exponent.
 */
export function amountOutcome(
  operation: keyof typeof AMOUNT_RULES | 'Release',
  isoAmount: number,
  currency: string,
): AcquirerOutcome {
  if (operation === 'Release') return 'Success';
  const deniedUpTo = AMOUNT_RULES[operation];
  // hundredths = isoAmount * 100 / 10^exponent, compared without division.
  const scaled = BigInt(isoAmount) * 100n;
  const unit = 10n ** BigInt(currencyExponent(currency));
  const at = (hundredths: number) => BigInt(hundredths) * unit;
  if (scaled <= at(deniedUpTo)) return 'Denied';
  if (scaled === at(deniedUpTo + 1)) return 'TemporaryFailed';
  if (scaled === at(deniedUpTo + 2)) return 'Error';
  return 'Success';
}
