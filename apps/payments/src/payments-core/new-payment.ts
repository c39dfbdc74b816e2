import { randomUUID } from 'node:crypto';
import type { CreatePaymentRequest, PaymentMethod } from '@byrd/contracts';
import { Transaction } from '../transactions/transaction.entity.js';
import type { Payer } from './payer.js';

export interface NewPaymentFields {
  payer: Payer;
  request: Pick<CreatePaymentRequest, 'currency' | 'redirectUrl'>;
  isoAmount: number;
  paymentMethod: PaymentMethod;
  isPreAuth: boolean;
  acquirer: string;
  requestId: string;
  /** The request's idempotency-key as the payment keeps it (see `retriedPayment`). */
  idempotencyKey?: string | null;
  expiresAt: Date;
  now: Date;
}

/** A new payment (or pre-auth) of any method, before its outcome: no balances, no card yet. */
export function newPayment(fields: NewPaymentFields): Transaction {
  const { payer, request, now } = fields;
  return Object.assign(new Transaction(), {
    id: randomUUID(),
    merchantId: payer.merchantId,
    merchantMode: payer.mode,
    orderId: payer.order?.orderId ?? null,
    orderRef: payer.orderRef,
    operationType: fields.isPreAuth ? 'PreAuth' : 'Payment',
    sourceTransactionId: null,
    paymentMethod: fields.paymentMethod,
    isoAmount: fields.isoAmount,
    currency: request.currency,
    capturedIsoAmount: 0,
    refundedIsoAmount: 0,
    releasedIsoAmount: 0,
    refusedByOrder: false,
    refundedAtOnce: false,
    brand: null,
    maskedCardNumber: null,
    cardExpiration: null,
    holder: null,
    tokenId: null,
    isPreAuth: fields.isPreAuth,
    transactionMode: 'None',
    initiatedFrom: payer.initiatedFrom,
    acquirer: fields.acquirer,
    redirectUrl: request.redirectUrl ?? payer.order?.redirectUrl ?? null,
    requestId: fields.requestId,
    fingerprint: randomUUID(),
    asyncDetails: null,
    saveCardReference: null,
    savedTokenId: null,
    expiresAt: fields.expiresAt,
    acquirerPendingSince: null,
    idempotencyKey: fields.idempotencyKey ?? null,
    payIdempotencyKey: null,
    createdAt: now,
    updatedAt: now,
  } satisfies Partial<Transaction>);
}
