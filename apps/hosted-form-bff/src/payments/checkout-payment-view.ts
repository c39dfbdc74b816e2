import type { CheckoutPaymentView } from '@byrd/contracts';

/**
 * The payment as the page may see it, field by field: whatever else payments' reply might carry
 * never reaches the browser. Card data appears only masked (`savedCard.maskedCardNumber`).
 */
export function toCheckoutPaymentView(payment: CheckoutPaymentView): CheckoutPaymentView {
  return {
    transactionId: payment.transactionId,
    type: payment.type,
    status: payment.status,
    code: payment.code,
    description: payment.description,
    amount: payment.amount,
    currency: payment.currency,
    brand: payment.brand ?? null,
    threeDSecure: payment.threeDSecure
      ? {
          id: payment.threeDSecure.id,
          status: payment.threeDSecure.status,
          requestId: payment.threeDSecure.requestId,
        }
      : null,
    refusedByOrder: payment.refusedByOrder === true,
    multibanco: payment.multibanco ?? null,
    mbway: payment.mbway ?? null,
    savedCard: payment.savedCard
      ? {
          tokenId: payment.savedCard.tokenId,
          maskedCardNumber: payment.savedCard.maskedCardNumber,
          brand: payment.savedCard.brand ?? null,
        }
      : null,
  };
}
