// The event catalogue of SPEC.md. An event name is also its JetStream subject.
import type { ValueOf } from '../enums.js';

/** Order events. */
export const OrderEvents = {
  Created: 'order.created',
  Pending: 'order.pending',
  Paid: 'order.paid',
  Refunded: 'order.refunded',
  Canceled: 'order.canceled',
  Expired: 'order.expired',
  TemporaryFailed: 'order.temporaryfailed',
  /** A capture took less than the order's amount (so far): the order is paid in part. */
  PartialPaid: 'order.partialpaid',
  /** A refund gave back part of what the order took; the order stays paid. */
  PartialRefunded: 'order.partialrefunded',
} as const;
export type OrderEventName = ValueOf<typeof OrderEvents>;

/** The four transaction event families (middle segment of the name). */
export const TRANSACTION_EVENT_KINDS = ['preauth', 'capture', 'payment', 'refund'] as const;
export type TransactionEventKind = (typeof TRANSACTION_EVENT_KINDS)[number];

/** The five outcomes of each transaction family (last segment of the name). */
export const TRANSACTION_EVENT_OUTCOMES = ['pending', 'success', 'failed', 'error', 'canceled'] as const;
export type TransactionEventOutcome = (typeof TRANSACTION_EVENT_OUTCOMES)[number];

/** `transaction.<kind>.<outcome>`. */
export type TransactionEventName = `transaction.${TransactionEventKind}.${TransactionEventOutcome}`;

/** Transaction events. */
export const TransactionEvents = {
  PreAuthPending: 'transaction.preauth.pending',
  PreAuthSuccess: 'transaction.preauth.success',
  PreAuthFailed: 'transaction.preauth.failed',
  PreAuthError: 'transaction.preauth.error',
  PreAuthCanceled: 'transaction.preauth.canceled',
  CapturePending: 'transaction.capture.pending',
  CaptureSuccess: 'transaction.capture.success',
  CaptureFailed: 'transaction.capture.failed',
  CaptureError: 'transaction.capture.error',
  CaptureCanceled: 'transaction.capture.canceled',
  PaymentPending: 'transaction.payment.pending',
  PaymentSuccess: 'transaction.payment.success',
  PaymentFailed: 'transaction.payment.failed',
  PaymentError: 'transaction.payment.error',
  PaymentCanceled: 'transaction.payment.canceled',
  RefundPending: 'transaction.refund.pending',
  RefundSuccess: 'transaction.refund.success',
  RefundFailed: 'transaction.refund.failed',
  RefundError: 'transaction.refund.error',
  RefundCanceled: 'transaction.refund.canceled',
} as const satisfies Record<string, TransactionEventName>;

// Compile-time check that the object above names all 20 combinations.
type AssertNever<T extends never> = T;
type _EveryTransactionEventNamed = AssertNever<
  Exclude<TransactionEventName, ValueOf<typeof TransactionEvents>>
>;

/** Chargeback events. */
export const ChargebackEvents = {
  Created: 'chargeback.created',
  Disputing: 'chargeback.disputing',
  PendingAction: 'chargeback.pendingaction',
  Closed: 'chargeback.closed',
  Won: 'chargeback.won',
  Lost: 'chargeback.lost',
} as const;
export type ChargebackEventName = ValueOf<typeof ChargebackEvents>;

/** Any event name. */
export type EventName = OrderEventName | TransactionEventName | ChargebackEventName;

/** Event families; each is also a JetStream subject prefix. */
export const EVENT_FAMILIES = ['order', 'transaction', 'chargeback'] as const;
export type EventFamily = (typeof EVENT_FAMILIES)[number];

/** The family of an event name, at the type level. */
export type EventFamilyOf<E extends EventName> = E extends `${infer F extends EventFamily}.${string}`
  ? F
  : never;

/** The event names of one family. */
export type EventNameOf<F extends EventFamily> = Extract<EventName, `${F}.${string}`>;

/** The 35 event names the platform sends: 9 order, 20 transaction, 6 chargeback. */
export const ALL_EVENT_NAMES: readonly EventName[] = Object.freeze([
  ...Object.values(OrderEvents),
  ...Object.values(TransactionEvents),
  ...Object.values(ChargebackEvents),
]);

const EVENT_NAME_SET: ReadonlySet<string> = new Set(ALL_EVENT_NAMES);

/**
 * Names the public .NET client knows and merchants may subscribe to, which the platform never sends:
 * order-level mirrors of the transaction events (`order.payment.success`, ...). Each of those facts
 * already reaches the merchant as its `transaction.*` event carrying the orderId.
 */
export const ACCEPTED_NEVER_SENT_EVENT_NAMES: readonly string[] = Object.freeze(
  TRANSACTION_EVENT_KINDS.flatMap((kind) =>
    TRANSACTION_EVENT_OUTCOMES.map((outcome) => `order.${kind}.${outcome}`),
  ),
);

/** Every name a webhook setting may list: the 35 sent and the 20 accepted but never sent. */
export const SUBSCRIBABLE_EVENT_NAMES: readonly string[] = Object.freeze([
  ...ALL_EVENT_NAMES,
  ...ACCEPTED_NEVER_SENT_EVENT_NAMES,
]);

/** True for a name of the catalogue. */
export function isEventName(value: unknown): value is EventName {
  return typeof value === 'string' && EVENT_NAME_SET.has(value);
}

/** 'order', 'transaction' or 'chargeback'. */
export function eventFamily<E extends EventName>(name: E): EventFamilyOf<E> {
  return name.slice(0, name.indexOf('.')) as EventFamilyOf<E>;
}

/** Builds `transaction.<kind>.<outcome>`. */
export function transactionEventName<K extends TransactionEventKind, O extends TransactionEventOutcome>(
  kind: K,
  outcome: O,
): `transaction.${K}.${O}` {
  return `transaction.${kind}.${outcome}`;
}

/** Splits a transaction event name into its kind and outcome. */
export function parseTransactionEventName(name: TransactionEventName): {
  kind: TransactionEventKind;
  outcome: TransactionEventOutcome;
} {
  const [, kind, outcome] = name.split('.') as ['transaction', TransactionEventKind, TransactionEventOutcome];
  return { kind, outcome };
}

/** Name of the JetStream stream carrying every event (a default; tests use suffixed names). */
export const EVENTS_STREAM = 'EVENTS';

/** Subjects of the events stream: one wildcard per family. */
export const EVENT_STREAM_SUBJECTS = Object.freeze(EVENT_FAMILIES.map((family) => `${family}.>` as const));
