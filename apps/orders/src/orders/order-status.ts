import {
  OrderEvents,
  type OrderEventName,
  type OperationType,
  type OrderStatus,
  type TransactionStatus,
} from '@byrd/contracts';

export interface TransactionFact {
  transactionId: string;
  operationType: OperationType;
  status: TransactionStatus;
  isoAmount: number;
  sourceTransactionId?: string | null;
  /** Money payments gave back as it arrived (the order was held by another payment): never counted. */
  refundedAtOnce?: boolean;
}

/** The transactions that count for the order's status and amounts (`refundedAtOnce` ones do not). */
export function countedOf<T extends TransactionFact>(transactions: T[]): T[] {
  return transactions.filter((t) => !t.refundedAtOnce);
}

export interface OrderFacts {
  canceledAt: Date | null;
  expiredAt: Date | null;
  transactions: TransactionFact[];
}

/**
 * An attempt whose outcome is not known yet. TemporaryFailed is one: the acquirer timed out, and the
 * recovery settles it from what the acquirer holds (often a success), so the order stays held and
 * `pending`, never `created` ("no payment yet, or all attempts failed") while it may be charged.
 */
const IN_PROGRESS: readonly TransactionStatus[] = [
  'Created',
  'Processing',
  'PendingMerchantAction',
  'TemporaryFailed',
];
const TERMINAL: readonly TransactionStatus[] = ['Success', 'Denied', 'Error', 'Canceled'];

/**
 * Whether a payment attempt keeps the order's payment lock: it may still be charging the order, or
 * holds its money. Not once it ended without money (a released pre-authorisation is recorded as
 * Canceled), nor a payment whose money was refunded as it arrived (`refundedAtOnce`: payments
 * settled it after we had ended it, or while another attempt held the order); that one may have
 * taken the lock just before, and its event is the only thing left to give the lock back.
 */
export function keepsPaymentLock(attempt: Pick<TransactionFact, 'status' | 'refundedAtOnce'>): boolean {
  if (attempt.refundedAtOnce) return false;
  return attempt.status !== 'Denied' && attempt.status !== 'Error' && attempt.status !== 'Canceled';
}

/**
 * Whether `transaction`, first seen, becomes the order's last transaction. An attempt
 * (or money refunded as it arrived) does not take it from another transaction that holds the order
 * (took or authorised its money, or holds its payment lock): whatever order their events came in,
 * that one is what the order rests on, and the attempt is an older one whose events came late (a
 * 3DS challenge left to lapse after another card paid). Captures, refunds and releases act on the
 * order's money, so they come after what holds it and take it.
 */
export function takesLastTransaction(
  transaction: TransactionFact,
  order: { paymentLockId: string | null },
  transactions: TransactionFact[],
): boolean {
  const attempt = transaction.operationType === 'Payment' || transaction.operationType === 'PreAuth';
  if (!attempt && !transaction.refundedAtOnce) return true;
  if (order.paymentLockId && order.paymentLockId !== transaction.transactionId) return false;
  return !countedOf(transactions).some(
    (t) =>
      t.transactionId !== transaction.transactionId &&
      t.status === 'Success' &&
      (t.operationType === 'Payment' || t.operationType === 'PreAuth' || t.operationType === 'Capture'),
  );
}

function rank(status: TransactionStatus): number {
  if (TERMINAL.includes(status)) return 3;
  if (status === 'TemporaryFailed') return 2;
  return status === 'Created' ? 0 : 1;
}

/**
 * Events can arrive out of order (redeliveries, two producers): a late "pending" must never undo a
 * final outcome. A final outcome may still follow another (a released pre-auth: Success → Canceled).
 * Not a success refunded at once (`refundedAtOnce`): it is that payment's last word (payments records
 * such money after its own end of the payment, Error or its void Canceled, or while another payment
 * holds the order, and nothing after it), so an end seen after it is the older one.
 */
export function mergeTransactionStatus(
  current: TransactionStatus | undefined,
  incoming: TransactionStatus,
  refundedAtOnce = false,
): TransactionStatus {
  if (current === undefined) return incoming;
  if (refundedAtOnce && current === 'Success' && TERMINAL.includes(incoming)) return current;
  return rank(incoming) >= rank(current) ? incoming : current;
}

export function sumOf(
  transactions: TransactionFact[],
  operations: OperationType[],
  status: TransactionStatus,
): number {
  return transactions
    .filter((t) => operations.includes(t.operationType) && t.status === status)
    .reduce((total, t) => total + t.isoAmount, 0);
}

/**
 * The pre-authorisations whose whole amount was released by successful releases: they hold no
 * money any more, so they read Canceled (and give the order's payment lock back). Computed from
 * every transaction of the order, so it holds whatever order the pre-auth's own event and its
 * releases' events came in; a partial release leaves the pre-auth holding the rest.
 */
export function fullyReleasedPreAuths<T extends TransactionFact>(transactions: T[]): T[] {
  return transactions.filter((preAuth) => {
    if (preAuth.operationType !== 'PreAuth' || preAuth.status !== 'Success') return false;
    const released = transactions
      .filter(
        (t) =>
          t.operationType === 'Release' &&
          t.status === 'Success' &&
          t.sourceTransactionId === preAuth.transactionId,
      )
      .reduce((total, t) => total + t.isoAmount, 0);
    return released >= preAuth.isoAmount;
  });
}

/**
 * The order status follows from what happened to its transactions, so it is the same whatever
 * order the events came in. Money taken wins over cancel and expiry: the merchant must see it.
 */
export function deriveOrderStatus(order: OrderFacts): OrderStatus {
  const transactions = countedOf(order.transactions);
  const paid = sumOf(transactions, ['Payment', 'Capture'], 'Success');
  if (paid > 0) return sumOf(transactions, ['Refund'], 'Success') >= paid ? 'refunded' : 'paid';
  if (order.canceledAt) return 'canceled';
  if (order.expiredAt) return 'expired';
  const authorised = transactions.some((t) => t.operationType === 'PreAuth' && t.status === 'Success');
  const inProgress = transactions.some(
    (t) => (t.operationType === 'Payment' || t.operationType === 'PreAuth') && IN_PROGRESS.includes(t.status),
  );
  return authorised || inProgress ? 'pending' : 'created';
}

/** The order event announcing a status change, if the change is one merchants are told about. */
export function eventForTransition(from: OrderStatus, to: OrderStatus): OrderEventName | null {
  if (from === to) return null;
  switch (to) {
    case 'paid':
      return OrderEvents.Paid;
    case 'pending':
      return OrderEvents.Pending;
    case 'refunded':
      return OrderEvents.Refunded;
    case 'canceled':
      return OrderEvents.Canceled;
    case 'expired':
      return OrderEvents.Expired;
    case 'created':
      return null; // every attempt failed: the order is payable again, nothing to announce
  }
}

/** Whether an order in this status has taken money (some of it may have been refunded since). */
export function holdsMoney(status: OrderStatus): boolean {
  return status === 'paid' || status === 'refunded';
}

/**
 * The order events a status change announces, in the order things happened: an order that learns of
 * its payment only after the refund of all of it (their events came the other way round) was paid,
 * then refunded, and merchants hear both.
 */
export function transitionEvents(from: OrderStatus, to: OrderStatus): OrderEventName[] {
  if (to === 'refunded' && !holdsMoney(from)) return [OrderEvents.Paid, OrderEvents.Refunded];
  const change = eventForTransition(from, to);
  return change ? [change] : [];
}

/**
 * The order-level "in part" event a newly successful transaction calls for: a capture that leaves
 * the order's amount not yet taken (order.partialpaid), a refund that gives back less than was
 * taken (order.partialrefunded; a full one is order.refunded).
 */
export function partialEvent(
  operationType: OperationType,
  order: { isoAmount: number; status: OrderStatus },
  all: TransactionFact[],
): OrderEventName | null {
  const transactions = countedOf(all);
  const paid = sumOf(transactions, ['Payment', 'Capture'], 'Success');
  if (operationType === 'Capture' && paid < order.isoAmount) return OrderEvents.PartialPaid;
  if (operationType === 'Refund' && order.status === 'paid') {
    const refunded = sumOf(transactions, ['Refund'], 'Success');
    if (refunded > 0 && refunded < paid) return OrderEvents.PartialRefunded;
  }
  return null;
}
