// How a transaction is announced as a transaction.* event, and what such an event's name says of its
// transaction: payments writes by the first, orders reads by the second, so they cannot disagree.
import type { OperationType, TransactionStatus } from '../enums.js';
import {
  transactionEventName,
  type TransactionEventKind,
  type TransactionEventName,
  type TransactionEventOutcome,
} from './catalogue.js';

/** The family each operation is announced under; a release has its own rule (see below). */
const KIND_OF_OPERATION: Record<Exclude<OperationType, 'Release'>, TransactionEventKind> = {
  Payment: 'payment',
  PreAuth: 'preauth',
  Capture: 'capture',
  Refund: 'refund',
};

/** The outcome each transaction status is announced as. */
const OUTCOME_OF_STATUS: Record<TransactionStatus, TransactionEventOutcome> = {
  Created: 'pending',
  Processing: 'pending',
  PendingMerchantAction: 'pending',
  Success: 'success',
  Denied: 'failed',
  Error: 'error',
  TemporaryFailed: 'error',
  Canceled: 'canceled',
};

/**
 * The same for a capture, refund or release. One that timed out at the acquirer (TemporaryFailed) is
 * not an error: its money may have moved, and the recovery settles it from what the acquirer holds
 * (often a success). Announced as an error, a merchant would ask again under a new key and refund
 * twice; so it is pending until settled.
 */
const OUTCOME_OF_FOLLOW_UP_STATUS: Record<TransactionStatus, TransactionEventOutcome> = {
  ...OUTCOME_OF_STATUS,
  TemporaryFailed: 'pending',
};

/** The operation a family's events announce (a family is never a release's own). */
const OPERATION_OF_KIND = Object.fromEntries(
  Object.entries(KIND_OF_OPERATION).map(([operation, kind]) => [kind, operation]),
) as Record<TransactionEventKind, OperationType>;

/** The status an outcome stands for, of the statuses announced as it. */
const STATUS_OF_OUTCOME: Record<TransactionEventOutcome, TransactionStatus> = {
  pending: 'Processing',
  success: 'Success',
  failed: 'Denied',
  error: 'Error',
  canceled: 'Canceled',
};

/** What a release's event says beyond its status. */
export interface ReleaseFacts {
  /** The release left its pre-authorisation holding nothing (released to the last cent, settled). */
  fullyReleased: boolean;
}

/**
 * The event announcing a transaction of this (public) operation in this status. A release is
 * announced in its pre-authorisation's family: transaction.preauth.canceled once the pre-auth holds
 * nothing any more; a partial one as transaction.preauth.success (the pre-auth still holds the rest);
 * one declined (or canceled: it released nothing) as .failed, failed as .error, and one whose
 * outcome is not known yet as .pending.
 */
export function transactionEventNameOf(
  operationType: OperationType,
  status: TransactionStatus,
  release: ReleaseFacts = { fullyReleased: false },
): TransactionEventName {
  if (operationType === 'Release') {
    if (status === 'Success')
      return transactionEventName('preauth', release.fullyReleased ? 'canceled' : 'success');
    return transactionEventName(
      'preauth',
      status === 'Canceled' ? 'failed' : OUTCOME_OF_FOLLOW_UP_STATUS[status],
    );
  }
  const outcomes =
    operationType === 'Capture' || operationType === 'Refund'
      ? OUTCOME_OF_FOLLOW_UP_STATUS
      : OUTCOME_OF_STATUS;
  return transactionEventName(KIND_OF_OPERATION[operationType], outcomes[status]);
}

/**
 * What a transaction.* event's name says of its transaction, for an event whose content lacks the
 * operation or status: the operation of its family and the status its outcome stands for
 * (`undefined` for a segment that is not one of the catalogue's).
 */
export function transactionOfEventName(name: string): {
  operationType: OperationType | undefined;
  status: TransactionStatus | undefined;
} {
  const [, kind = '', outcome = ''] = name.split('.');
  return {
    operationType: Object.hasOwn(OPERATION_OF_KIND, kind)
      ? OPERATION_OF_KIND[kind as TransactionEventKind]
      : undefined,
    status: Object.hasOwn(STATUS_OF_OUTCOME, outcome)
      ? STATUS_OF_OUTCOME[outcome as TransactionEventOutcome]
      : undefined,
  };
}
