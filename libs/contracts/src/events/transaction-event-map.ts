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

/**
 * The event announcing a transaction of this (public) operation in this status. A release ends a
 * pre-authorisation, so it is announced as transaction.preauth.canceled (or .error when it failed).
 */
export function transactionEventNameOf(
  operationType: OperationType,
  status: TransactionStatus,
): TransactionEventName {
  if (operationType === 'Release') {
    return transactionEventName('preauth', status === 'Success' ? 'canceled' : 'error');
  }
  return transactionEventName(KIND_OF_OPERATION[operationType], OUTCOME_OF_STATUS[status]);
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
