import { toDecimalAmount, type CheckoutPaymentView, type PaymentType } from '@byrd/contracts';
import type { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { presentAsyncDetails } from '../transactions/transaction.presenter.js';

/** A hosted-form payment as the page follows it (`rpc.payments.create` and `rpc.payments.get`). */
export function presentCheckoutPayment(
  transaction: Transaction,
  session: ThreeDSSession | null,
): CheckoutPaymentView {
  const { multibanco, mbway } = presentAsyncDetails(transaction);
  return {
    transactionId: transaction.id,
    type: transaction.paymentMethod as PaymentType,
    status: transaction.status,
    code: transaction.code,
    description: transaction.description,
    amount: toDecimalAmount(transaction.isoAmount, transaction.currency),
    currency: transaction.currency,
    brand: transaction.brand,
    // Only while the shopper still has to answer the issuer: the page hands these to the 3DS SDK.
    threeDSecure:
      session?.status === 'Created'
        ? { id: session.id, status: session.status, requestId: transaction.requestId }
        : null,
    // Denied (BYRD205) by its order, not the bank: the page tells its shopper that, not "declined".
    refusedByOrder: transaction.refusedByOrder === true,
    multibanco: multibanco ?? null,
    mbway: mbway ?? null,
    savedCard:
      transaction.savedTokenId && transaction.maskedCardNumber
        ? {
            tokenId: transaction.savedTokenId,
            maskedCardNumber: transaction.maskedCardNumber,
            brand: transaction.brand,
          }
        : null,
  };
}
