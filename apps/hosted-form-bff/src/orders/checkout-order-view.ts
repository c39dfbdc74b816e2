import {
  PaymentType,
  paymentTypePreAuthorises,
  paymentTypeTakesCurrency,
  type CheckoutOrderView,
  type OrderSummary,
  type PaymentMethod,
} from '@byrd/contracts';
import { allowedCheckoutOrigins } from '@byrd/platform';

/** The methods this form takes, in the order it lists them. */
export const FORM_PAYMENT_METHODS: readonly PaymentType[] = Object.freeze([
  PaymentType.Card,
  PaymentType.Multibanco,
  PaymentType.MbWay,
]);

/** Shown when the order does not name its merchant. */
export const FALLBACK_MERCHANT_NAME = 'Online store';

/**
 * The methods offered for an order: those the merchant allowed (none listed means all) that this
 * form can take and payments would accept for it (Multibanco and MB WAY: euros only, and never for
 * an order asking for a pre-authorisation, since they settle in full), in the form's order.
 */
export function offeredPaymentMethods(
  order: Pick<OrderSummary, 'allowedPaymentMethods' | 'currency' | 'isPreAuth'>,
): PaymentType[] {
  const allowed: readonly PaymentMethod[] = order.allowedPaymentMethods ?? [];
  return FORM_PAYMENT_METHODS.filter(
    (method) =>
      (allowed.length === 0 || allowed.includes(method)) &&
      paymentTypeTakesCurrency(method, order.currency) &&
      (!order.isPreAuth || paymentTypePreAuthorises(method)),
  );
}

/** What the page renders of an order (never the merchant id nor the checkout key). */
export function toCheckoutOrderView(
  order: OrderSummary,
  threeDSecureSdkUrl: string,
  merchantOrigins: readonly string[] = [],
): CheckoutOrderView {
  return {
    orderId: order.orderId,
    status: order.status,
    amount: order.amount,
    isoAmount: order.isoAmount,
    currency: order.currency,
    orderRef: order.orderRef,
    merchantName: order.merchantName?.trim() || FALLBACK_MERCHANT_NAME,
    merchantMode: order.merchantMode ?? 'sandbox',
    expiresAt: order.expiresAt,
    redirectUrl: order.redirectUrl,
    allowedOrigins: allowedCheckoutOrigins(order.redirectUrl, merchantOrigins),
    paymentMethods: offeredPaymentMethods(order),
    saveCardOffered: Boolean(order.tokenOptions?.customReference),
    isPreAuth: order.isPreAuth,
    paymentLocked: order.paymentLocked,
    authorized: order.authorized ?? false,
    threeDSecureSdkUrl,
  };
}
