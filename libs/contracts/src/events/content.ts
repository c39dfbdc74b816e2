import type { ReturnCode } from '../codes.js';
import type {
  ChargebackStatus,
  InitiatedFrom,
  OperationType,
  OrderStatus,
  PaymentMethod,
  TransactionStatus,
} from '../enums.js';
import {
  eventFamily,
  type ChargebackEventName,
  type EventName,
  type OrderEventName,
  type TransactionEventName,
} from './catalogue.js';

/** Data of `order.*` events, and the webhook `content` of them. */
export interface OrderEventContent {
  /** Order GUID. */
  orderId: string;
  /** Caller's reference. */
  orderRef: string | null;
  /** Order status after the change. */
  status: OrderStatus;
  /** Transaction id of the payment that moved the order (same value as `transactionId`). */
  paymentId: string | null;
  /** Transaction that moved the order. */
  transactionId: string | null;
  /** Decimal amount of the order. */
  amount: string;
  /** ISO 4217 code. */
  currency: string;
}

/** The nine fields of `transaction.*` events that webhooks deliver. */
export interface PublicTransactionEventContent {
  /** Transaction GUID. */
  transactionId: string;
  /** Order GUID, when attached to one. */
  orderId: string | null;
  /** Caller's reference. */
  orderRef: string | null;
  /** Transaction status. */
  status: TransactionStatus;
  /** Operation kind. */
  operationType: OperationType;
  /** Decimal amount. */
  amount: string;
  /** ISO 4217 code. */
  currency: string;
  /** Return code of the outcome. */
  code: ReturnCode;
  /** Text of `code`. */
  description: string;
}

/** Data of `transaction.*` events: the public fields plus extras for internal consumers. */
export interface TransactionEventContent extends PublicTransactionEventContent {
  /** Minor units. */
  isoAmount?: number;
  /** Transaction a capture, refund or release applies to. */
  sourceTransactionId?: string | null;
  /** Payment method of the transaction. */
  paymentMethod?: PaymentMethod;
  /** Where the transaction was started. */
  initiatedFrom?: InitiatedFrom;
  /**
   * Money that reached an order another payment already held (a late async payment), and its
   * refund made in the same database transaction: neither is the order's payment or refund.
   */
  refundedAtOnce?: boolean;
}

/** Data of `chargeback.*` events, and the webhook `content` of them. */
export interface ChargebackEventContent {
  /** Chargeback GUID. */
  chargebackId: string;
  /** Disputed transaction. */
  transactionId: string;
  /** Order of that transaction. */
  orderId: string | null;
  /** Chargeback status after the change. */
  status: ChargebackStatus;
  /** Disputed decimal amount. */
  amount: string;
  /** ISO 4217 code. */
  currency: string;
  /** Scheme reason, when given. */
  reason: string | null;
}

/** The data type of an event name: `EventContentOf<'order.paid'>` is `OrderEventContent`. */
export type EventContentOf<E extends EventName> = E extends OrderEventName
  ? OrderEventContent
  : E extends TransactionEventName
    ? TransactionEventContent
    : E extends ChargebackEventName
      ? ChargebackEventContent
      : never;

/** The webhook `content` type of an event name (internal extras removed). */
export type PublicEventContentOf<E extends EventName> = E extends TransactionEventName
  ? PublicTransactionEventContent
  : EventContentOf<E>;

const PUBLIC_FIELDS = {
  order: ['orderId', 'orderRef', 'status', 'paymentId', 'transactionId', 'amount', 'currency'],
  transaction: [
    'transactionId',
    'orderId',
    'orderRef',
    'status',
    'operationType',
    'amount',
    'currency',
    'code',
    'description',
  ],
  chargeback: ['chargebackId', 'transactionId', 'orderId', 'status', 'amount', 'currency', 'reason'],
} as const satisfies {
  order: readonly (keyof OrderEventContent)[];
  transaction: readonly (keyof PublicTransactionEventContent)[];
  chargeback: readonly (keyof ChargebackEventContent)[];
};

/** Documented fields of a family's content, in delivery order. */
export function publicContentFields(type: EventName): readonly string[] {
  return PUBLIC_FIELDS[eventFamily(type)];
}

/**
 * The webhook `content` of an event: exactly the documented fields, in documented order
 * (missing optional ones as null), so internal extras never leak to subscribers.
 */
export function toPublicContent<E extends EventName>(
  type: E,
  data: EventContentOf<E>,
): PublicEventContentOf<E> {
  const source = data as unknown as Record<string, unknown>;
  return Object.fromEntries(
    publicContentFields(type).map((field) => [field, source[field] ?? null]),
  ) as unknown as PublicEventContentOf<E>;
}

/**
 * Ids an event can be looked up by (`GET /api/v1/webhooks?referenceId=`): the subject id
 * first, then the related ones, without nulls or repeats.
 */
export function referenceIdsOf<E extends EventName>(type: E, data: EventContentOf<E>): string[] {
  const source = data as unknown as Record<string, unknown>;
  const fields: Record<ReturnType<typeof eventFamily>, string[]> = {
    order: ['orderId', 'transactionId', 'paymentId'],
    transaction: ['transactionId', 'orderId', 'sourceTransactionId'],
    chargeback: ['chargebackId', 'transactionId', 'orderId'],
  };
  const ids = fields[eventFamily(type)]
    .map((field) => source[field])
    .filter((id): id is string => typeof id === 'string' && id.length > 0);
  return [...new Set(ids)];
}
