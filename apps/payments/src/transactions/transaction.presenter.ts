import {
  describe as describeCode,
  toDecimalAmount,
  type MbWayDetails,
  type MultibancoReference,
  type PaymentResponse,
  type TransactionResponse,
} from '@byrd/contracts';
import { publicOperationType, type Transaction } from './transaction.entity.js';
import type { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';

/** `GET /api/v2/transactions/{id}`: the transaction with its 3DS result. */
export function presentTransaction(
  transaction: Transaction,
  session: ThreeDSSession | null,
): TransactionResponse {
  return {
    transactionId: transaction.id,
    orderId: transaction.orderId,
    orderRef: transaction.orderRef,
    status: transaction.status,
    operationType: publicOperationType(transaction),
    brand: transaction.brand,
    paymentMethod: transaction.paymentMethod,
    code: transaction.code,
    description: transaction.description,
    amount: toDecimalAmount(transaction.isoAmount, transaction.currency),
    isoAmount: transaction.isoAmount,
    currency: transaction.currency,
    acquirer: transaction.acquirer,
    transactionMode: transaction.transactionMode,
    isPreAuth: transaction.isPreAuth,
    initiatedFrom: transaction.initiatedFrom,
    sourceTransactionId: transaction.sourceTransactionId,
    maskedCardNumber: transaction.maskedCardNumber,
    tokenId: transaction.tokenId,
    threeDSecure: session
      ? {
          id: session.id,
          status: session.status,
          transStatus: session.transStatus,
          transStatusReason: session.transStatusReason,
          eci: session.eci,
          aav: session.aav,
          dsTransactionId: session.dsTransactionId,
          protocolVersion: session.protocolVersion,
          verificationMethod: 'ThreeDSecure',
        }
      : null,
    createdAt: transaction.createdAt.toISOString(),
    updatedAt: transaction.updatedAt.toISOString(),
    ...presentAsyncDetails(transaction),
  };
}

/** The `multibanco` or `mbway` block of an async payment, from what was stored at its creation. */
export function presentAsyncDetails(transaction: Transaction): {
  multibanco?: MultibancoReference;
  mbway?: MbWayDetails;
} {
  const details = transaction.asyncDetails;
  if (!details) return {};
  if (transaction.paymentMethod === 'multibanco') {
    return {
      multibanco: {
        entity: String(details.entity),
        reference: String(details.reference),
        amount: toDecimalAmount(transaction.isoAmount, transaction.currency),
        expiresAt: transaction.expiresAt.toISOString(),
      },
    };
  }
  if (transaction.paymentMethod === 'mbway') return { mbway: { phoneNumber: String(details.phoneNumber) } };
  return {};
}

/** `POST /api/v2/payment` answer (SPEC.md "Payment - response"). */
export function presentPayment(
  transaction: Transaction,
  session: ThreeDSSession | null,
  actionUrl: string | null,
): PaymentResponse {
  return {
    type: 'card',
    currency: transaction.currency,
    orderRef: transaction.orderRef,
    acquirer: transaction.acquirer,
    brand: transaction.brand,
    paymentMethod: transaction.paymentMethod,
    redirectUrl: transaction.redirectUrl,
    fingerprint: transaction.fingerprint,
    action: actionUrl ? { type: 'redirect', url: actionUrl } : null,
    code: transaction.code,
    description: transaction.description || describeCode(transaction.code),
    status: transaction.status,
    requestId: transaction.requestId,
    expiresAt: transaction.expiresAt.toISOString(),
    acceptTokenization: transaction.paymentMethod === 'card',
    transactionMode: transaction.transactionMode,
    transactionId: transaction.id,
    amount: toDecimalAmount(transaction.isoAmount, transaction.currency),
    isoAmount: transaction.isoAmount,
    isPreAuth: transaction.isPreAuth,
    orderId: transaction.orderId,
    threeDSecure: session
      ? { id: session.id, verificationMethod: 'ThreeDSecure', channel: 'Browser', status: session.status }
      : null,
  };
}
