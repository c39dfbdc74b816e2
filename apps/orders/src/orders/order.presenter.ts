import {
  buildCheckoutUrl,
  SUCCESS_CODE,
  toDecimalAmount,
  withDescription,
  type OrderDetailsResponse,
  type OrderEventContent,
  type OrderResponse,
} from '@byrd/contracts';
import type { Order, OrderTransaction } from './order.entity.js';

/** The order as the gateway returns it on create (API-FACTS.md "Orders"). */
export function presentOrder(order: Order, checkoutBase: string): OrderResponse {
  return {
    orderId: order.id,
    orderDate: order.createdAt.toISOString(),
    expiresAt: order.expiresAt.toISOString(),
    checkoutUrl: buildCheckoutUrl(checkoutBase, { checkoutKey: order.checkoutKey, orderId: order.id }),
    checkoutKey: order.checkoutKey,
    status: order.status,
    amount: toDecimalAmount(order.isoAmount, order.currency),
    isoAmount: order.isoAmount,
    currency: order.currency,
    orderRef: order.orderRef,
    shopper: order.shopper,
    orderOptions: order.orderOptions,
    paymentOptions: order.paymentOptions,
    metadata: order.metadata,
    ...withDescription(SUCCESS_CODE),
  };
}

/** GET adds what happened to the order since. */
export function presentOrderDetails(
  order: Order,
  transactions: OrderTransaction[],
  checkoutBase: string,
): OrderDetailsResponse {
  return {
    ...presentOrder(order, checkoutBase),
    paymentId: order.paymentId,
    lastTransactionId: order.lastTransactionId,
    refundedAmount: toDecimalAmount(order.refundedIsoAmount, order.currency),
    isoRefundedAmount: order.refundedIsoAmount,
    canceledAt: order.canceledAt?.toISOString() ?? null,
    transactions: transactions.map((t) => ({
      id: t.transactionId,
      transactionId: t.transactionId,
      status: t.status,
      operationType: t.operationType,
      amount: toDecimalAmount(t.isoAmount, order.currency),
      isoAmount: t.isoAmount,
      paymentMethod: t.paymentMethod,
      createdAt: t.createdAt.toISOString(),
    })),
  };
}

/** Content of every order.* event (API-FACTS.md "Delivery body"). */
export function orderEventContent(order: Order): OrderEventContent {
  return {
    orderId: order.id,
    orderRef: order.orderRef,
    status: order.status,
    paymentId: order.paymentId,
    transactionId: order.lastTransactionId,
    amount: toDecimalAmount(order.isoAmount, order.currency),
    currency: order.currency,
  };
}
