import type { Transaction } from './transaction.entity.js';

/** What is still held by a pre-authorisation (neither captured nor released). */
export function heldOf(preAuth: Transaction): number {
  return preAuth.isoAmount - preAuth.capturedIsoAmount - preAuth.releasedIsoAmount;
}

/**
 * What can still be refunded of a payment, a capture, or a pre-authorisation's captures. A capture
 * reserves its amount on the pre-auth's captured total before the acquirer answers, so the captures
 * still in flight (`capturesInFlight`) are left out: only money known to be taken goes back.
 */
export function refundableOf(source: Transaction, capturesInFlight = 0): number {
  const base =
    source.operationType === 'PreAuth' ? source.capturedIsoAmount - capturesInFlight : source.isoAmount;
  return base - source.refundedIsoAmount;
}
