// One example envelope per event name, built with createEnvelope as the services build theirs, with
// fixed ids and times so the generated document is the same on every run.
import { describe, type ReturnCode } from '../codes.js';
import type { ChargebackStatus, OperationType, OrderStatus, TransactionStatus } from '../enums.js';
import {
  ChargebackEvents,
  eventFamily,
  parseTransactionEventName,
  type ChargebackEventName,
  type EventName,
  type OrderEventName,
  type TransactionEventKind,
  type TransactionEventName,
  type TransactionEventOutcome,
} from '../events/catalogue.js';
import type { EventContentOf } from '../events/content.js';
import { createEnvelope, type EventEnvelope } from '../events/envelope.js';

const EXAMPLE = {
  eventId: '0b9e4c7a-5d3f-4e21-9a8b-6c1d2e3f4a5b',
  merchantId: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
  orderId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  transactionId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
  sourceTransactionId: 'd4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f7a',
  chargebackId: 'e5f6a7b8-c9d0-4e1f-8a2b-3c4d5e6f7a8b',
  occurredAt: '2026-01-15T10:30:00.000Z',
} as const;

/** The order's status after each order event (`temporaryfailed` leaves it open; the partial ones, paid). */
const ORDER_STATUS_AFTER: Record<OrderEventName, OrderStatus> = {
  'order.created': 'created',
  'order.pending': 'pending',
  'order.paid': 'paid',
  'order.partialpaid': 'paid', // money was taken: the order is paid, for less than its amount
  'order.refunded': 'refunded',
  'order.partialrefunded': 'paid',
  'order.canceled': 'canceled',
  'order.expired': 'expired',
  'order.temporaryfailed': 'pending',
};

const OPERATION_OF_KIND: Record<TransactionEventKind, OperationType> = {
  preauth: 'PreAuth',
  capture: 'Capture',
  payment: 'Payment',
  refund: 'Refund',
};

/** A typical status and return code for each outcome (payments maps statuses to outcomes the other way). */
const OUTCOME_EXAMPLE: Record<TransactionEventOutcome, { status: TransactionStatus; code: ReturnCode }> = {
  pending: { status: 'Processing', code: 'BYRD207' },
  success: { status: 'Success', code: 'BYRD200' },
  failed: { status: 'Denied', code: 'BYRD205' },
  error: { status: 'Error', code: 'BYRD299' },
  canceled: { status: 'Canceled', code: 'BYRD208' },
};

const CHARGEBACK_STATUS_OF: Record<ChargebackEventName, ChargebackStatus> = {
  [ChargebackEvents.Created]: 'Created',
  [ChargebackEvents.Disputing]: 'Disputing',
  [ChargebackEvents.PendingAction]: 'PendingAction',
  [ChargebackEvents.Closed]: 'Closed',
  [ChargebackEvents.Won]: 'Won',
  [ChargebackEvents.Lost]: 'Lost',
};

/** An example envelope of an event name. */
export function exampleEnvelope(type: EventName): EventEnvelope {
  return createEnvelope(type, {
    id: EXAMPLE.eventId,
    occurredAt: EXAMPLE.occurredAt,
    merchantId: EXAMPLE.merchantId,
    paymentMethod: type === 'order.created' ? null : 'card',
    data: exampleData(type),
  });
}

function exampleData(type: EventName): EventContentOf<EventName> {
  switch (eventFamily(type)) {
    case 'order':
      return orderData(type as OrderEventName);
    case 'transaction':
      return transactionData(type as TransactionEventName);
    case 'chargeback':
      return {
        chargebackId: EXAMPLE.chargebackId,
        transactionId: EXAMPLE.transactionId,
        orderId: EXAMPLE.orderId,
        status: CHARGEBACK_STATUS_OF[type as ChargebackEventName],
        amount: '25.00',
        currency: 'EUR',
        reason: 'Fraud: card not present',
      };
  }
}

function orderData(type: OrderEventName): EventContentOf<OrderEventName> {
  const paidBy = type === 'order.created' || type === 'order.expired' ? null : EXAMPLE.transactionId;
  return {
    orderId: EXAMPLE.orderId,
    orderRef: 'shop-order-1001',
    status: ORDER_STATUS_AFTER[type],
    paymentId: paidBy,
    transactionId: paidBy,
    amount: '25.00',
    currency: 'EUR',
  };
}

function transactionData(type: TransactionEventName): EventContentOf<TransactionEventName> {
  const { kind, outcome } = parseTransactionEventName(type);
  // A release of a pre-authorisation is announced as transaction.preauth.canceled (a successful Release).
  const release = type === 'transaction.preauth.canceled';
  const { status, code } = release ? OUTCOME_EXAMPLE.success : OUTCOME_EXAMPLE[outcome];
  const operationType = release ? 'Release' : OPERATION_OF_KIND[kind];
  const follows = operationType === 'Capture' || operationType === 'Refund' || operationType === 'Release';
  return {
    transactionId: EXAMPLE.transactionId,
    orderId: EXAMPLE.orderId,
    orderRef: 'shop-order-1001',
    status,
    operationType,
    amount: '25.00',
    currency: 'EUR',
    code,
    description: describe(code),
    isoAmount: 2500,
    sourceTransactionId: follows ? EXAMPLE.sourceTransactionId : null,
    paymentMethod: 'card',
    initiatedFrom: 'Server',
  };
}
