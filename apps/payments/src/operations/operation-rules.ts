import { Refusal, type ApiError } from '@byrd/platform';
import { heldOf, refundableOf } from '../transactions/balances.js';
import type { Transaction } from '../transactions/transaction.entity.js';

export type FollowUpOperation = 'Capture' | 'Refund' | 'Release';

/**
 * Minor units of an operation's money still at stake elsewhere: chargebacks open or lost on it (for a
 * refund), and for a pre-authorisation, its captures and releases still at the acquirer.
 */
export interface Unavailable {
  chargedBack: ChargedBack;
  /** Of the root when it is a pre-authorisation (`refundableOf` ignores it on anything else). */
  capturesInFlight: number;
  /** Of the pre-authorisation a capture or release is asked of (0 for a refund). */
  releasesInFlight?: number;
}

/**
 * Minor units held by chargebacks that are open or were lost: that money is with the cardholder (or
 * may go back to them), so refunding it too would pay it back twice.
 */
export interface ChargedBack {
  /** On the source (the payment, the capture, or every capture of a pre-authorisation). */
  source: number;
  /** On everything of the root (the payment, or every capture of the pre-authorisation). */
  root: number;
}

/**
 * The state rules of follow-up operations. Returns the amount to use (the whole remaining balance
 * when none was asked for); throws the refusal a merchant would expect otherwise.
 * `root` is the payment or pre-auth the money came from; for a refund of a capture, `source` is the
 * capture and `root` its pre-auth, and both balances must allow the refund.
 */
export function checkOperation(
  operation: FollowUpOperation,
  source: Transaction,
  root: Transaction,
  requested: number | undefined,
  { chargedBack, capturesInFlight, releasesInFlight = 0 }: Unavailable = {
    chargedBack: { source: 0, root: 0 },
    capturesInFlight: 0,
  },
): number {
  if (source.status !== 'Success') {
    throw Refusal.notAllowed(
      `Transaction ${source.id} is ${source.status}; only a successful transaction can be ${pastTense(operation)}`,
    );
  }
  // What captures and releases still at the acquirer reserved may come back (a decline), so a
  // refusal for lack of it is not final: retryable, and not kept under the idempotency-key.
  const inFlight = capturesInFlight + releasesInFlight;
  switch (operation) {
    case 'Capture': {
      if (source.operationType !== 'PreAuth')
        throw Refusal.notAllowed('Only a pre-authorisation can be captured');
      const held = heldOf(source);
      if (held === 0 && inFlight > 0) throw stillInFlight('capture');
      if (held === 0)
        throw Refusal.notAllowed(
          'Nothing is left to capture: the pre-authorisation was fully captured or released',
        );
      return within(requested ?? held, held, inFlight, 'capture');
    }
    case 'Release': {
      if (source.operationType !== 'PreAuth')
        throw Refusal.notAllowed('Only a pre-authorisation can be released');
      if (source.capturedIsoAmount > 0 && source.capturedIsoAmount === capturesInFlight)
        throw stillInFlight('release');
      if (source.capturedIsoAmount > 0)
        throw Refusal.notAllowed('A captured pre-authorisation cannot be released; refund it instead');
      const held = heldOf(source);
      if (held === 0 && inFlight > 0) throw stillInFlight('release');
      if (held === 0) throw Refusal.notAllowed('The pre-authorisation was already released');
      return within(requested ?? held, held, inFlight, 'release');
    }
    case 'Refund': {
      if (source.operationType === 'Refund' || source.operationType === 'Release') {
        throw Refusal.notAllowed('Only a payment, a capture or a captured pre-authorisation can be refunded');
      }
      const refundable = refundableNow(source, root, { chargedBack, capturesInFlight });
      if (source.operationType === 'PreAuth' && source.capturedIsoAmount === 0) {
        throw Refusal.notAllowed('Nothing was captured on this pre-authorisation; release it instead');
      }
      if (source.operationType === 'PreAuth' && source.capturedIsoAmount === capturesInFlight) {
        throw Refusal.notAllowedYet(
          'The captures of this pre-authorisation are still waiting for the acquirer; refund once they are settled',
        );
      }
      // Captures still at the acquirer may yet take the money asked for (the recovery settles one
      // whose answer was lost): until then a refusal for lack of it is not final.
      const onceCaptured = refundableNow(source, root, { chargedBack, capturesInFlight: 0 });
      const fitsOnceCaptured = (amount: number) => capturesInFlight > 0 && amount <= onceCaptured;
      if (refundable <= 0) {
        if (fitsOnceCaptured(requested ?? 1)) throw capturesStillInFlight();
        const why = chargedBack.source > 0 || chargedBack.root > 0 ? 'refunded or charged back' : 'refunded';
        throw Refusal.alreadyRefunded(`The payment is already fully ${why}`);
      }
      const amount = requested ?? refundable;
      if (amount > refundable && fitsOnceCaptured(amount)) throw capturesStillInFlight();
      if (amount > refundable) {
        throw Refusal.refundExceedsBalance(
          `The refund amount exceeds the remaining balance (${refundable} minor units)`,
        );
      }
      return amount;
    }
  }
}

/**
 * What can be refunded of `source` now (may be 0 or less): both its own balance and its root's must
 * allow it (a capture's refunds count on its pre-auth, and the pre-auth's own on neither capture),
 * less what chargebacks hold and captures in flight have not yet taken.
 */
export function refundableNow(
  source: Transaction,
  root: Transaction,
  { chargedBack, capturesInFlight }: Unavailable,
): number {
  return Math.min(
    refundableOf(source, capturesInFlight) - chargedBack.source,
    refundableOf(root, capturesInFlight) - chargedBack.root,
  );
}

function within(amount: number, limit: number, inFlight: number, verb: string): number {
  if (amount > limit && amount <= limit + inFlight) throw stillInFlight(verb);
  if (amount > limit)
    throw Refusal.notAllowed(`Cannot ${verb} more than the ${limit} minor units still held`);
  return amount;
}

function stillInFlight(verb: string): ApiError {
  return Refusal.notAllowedYet(
    `A capture or release of this pre-authorisation is still waiting for the acquirer; ${verb} once it is settled`,
  );
}

function capturesStillInFlight(): ApiError {
  return Refusal.notAllowedYet(
    'A capture of this pre-authorisation is still waiting for the acquirer; refund once it is settled',
  );
}

function pastTense(operation: FollowUpOperation): string {
  return { Capture: 'captured', Refund: 'refunded', Release: 'released' }[operation];
}
