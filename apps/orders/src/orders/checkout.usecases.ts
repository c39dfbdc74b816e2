import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  OPEN_ORDER_STATUSES,
  isGuid,
  toDecimalAmount,
  type MerchantOrderRequest,
  type OrderAccessRequest,
  type OrderCancelResult,
  type OrderEmbedding,
  type OrderEmbeddingRequest,
  type OrderSummary,
  type PaymentMethod,
  type TokenOptions,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { Order, OrderTransaction } from './order.entity.js';
import { OrderEventRecorder } from './order-events.js';

/**
 * Finds an order by id and checkout key, or by merchant for the signed subjects (payments acting for
 * the merchant); a wrong key answers like a missing order, and a request with a key is judged by it alone.
 */
export async function findOrder(
  manager: EntityManager,
  request: OrderAccessRequest | MerchantOrderRequest,
  lock = false,
): Promise<Order> {
  const proof =
    'checkoutKey' in request
      ? isGuid(request.checkoutKey)
        ? { checkoutKey: request.checkoutKey }
        : null
      : typeof request.merchantId === 'string'
        ? { merchantId: request.merchantId }
        : null;
  const order =
    proof && isGuid(request.orderId)
      ? await manager.getRepository(Order).findOne({
          where: { id: request.orderId, ...proof },
          ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
        })
      : null;
  if (!order) throw ApiError.notFound(`Order ${String(request?.orderId)}`);
  return order;
}

/**
 * rpc.orders.get and rpc.orders.cancel take unsigned requests, which any client of the broker can
 * send: only the order's checkout key proves access there. One naming the merchant instead (payments
 * of the release before rpc.orders.getForMerchant, during a rolling upgrade) is refused as its caller
 * (BYRD403, a 500 there that an idempotency-key does not keep), not answered as a missing order.
 */
function checkoutKeyAccess(subject: string, request: OrderAccessRequest): OrderAccessRequest {
  if (typeof request?.checkoutKey === 'string') return request;
  throw Refusal.forbidden(`${subject} takes the order's checkout key`);
}

/** What the hosted form (or payments) needs of an order. */
@Injectable()
export class GetCheckoutOrder {
  constructor(private readonly dataSource: DataSource) {}

  /** rpc.orders.get: for the holder of its checkout key. */
  async execute(request: OrderAccessRequest): Promise<OrderSummary> {
    return this.summaryOf(checkoutKeyAccess('rpc.orders.get', request));
  }

  /** rpc.orders.getForMerchant: for payments, acting for its merchant's API key (a signed subject). */
  forMerchant(request: MerchantOrderRequest): Promise<OrderSummary> {
    return this.summaryOf(request);
  }

  private async summaryOf(request: OrderAccessRequest | MerchantOrderRequest): Promise<OrderSummary> {
    let order = await findOrder(this.dataSource.manager, request);
    let holder: OrderTransaction | null = null;
    if (order.paymentLockId) {
      // The attempt holding the lock, read with the order in one snapshot (an event commits its
      // status and the order's together): a successful pre-authorisation holds it until released.
      ({ order, holder } = await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
        const current = await findOrder(manager, request);
        const attempt = current.paymentLockId
          ? await manager.findOneBy(OrderTransaction, {
              transactionId: current.paymentLockId,
              orderId: current.id,
            })
          : null;
        return { order: current, holder: attempt };
      }));
    }
    const paymentOptions = (order.paymentOptions ?? {}) as OrderSummaryOptions;
    return {
      orderId: order.id,
      merchantId: order.merchantId,
      merchantName: order.merchantName,
      status: order.status,
      amount: toDecimalAmount(order.isoAmount, order.currency),
      isoAmount: order.isoAmount,
      currency: order.currency,
      orderRef: order.orderRef,
      expiresAt: order.expiresAt.toISOString(),
      merchantMode: order.merchantMode,
      redirectUrl: (order.orderOptions?.redirectUrl as string | undefined) ?? null,
      allowedPaymentMethods: paymentOptions.allowedPaymentMethods ?? [],
      tokenOptions: paymentOptions.tokenOptions ?? null,
      isPreAuth: paymentOptions.cardOptions?.isPreAuth ?? false,
      paymentLocked: order.paymentLockId !== null,
      paymentLockedBy: order.paymentLockId,
      authorized: holder?.operationType === 'PreAuth' && holder.status === 'Success',
    };
  }
}

/** rpc.orders.embedding: the merchant and redirectUrl of an order, for the frame-ancestors of its page. */
@Injectable()
export class GetOrderEmbedding {
  constructor(private readonly dataSource: DataSource) {}

  async execute(request: OrderEmbeddingRequest): Promise<OrderEmbedding> {
    const order = isGuid(request?.orderId)
      ? await this.dataSource.getRepository(Order).findOne({
          select: { id: true, merchantId: true, orderOptions: true },
          where: { id: request.orderId },
        })
      : null;
    if (!order) throw ApiError.notFound(`Order ${String(request?.orderId)}`);
    return {
      merchantId: order.merchantId,
      redirectUrl: (order.orderOptions?.redirectUrl as string | undefined) ?? null,
    };
  }
}

type OrderSummaryOptions = {
  allowedPaymentMethods?: PaymentMethod[];
  tokenOptions?: TokenOptions;
  cardOptions?: { isPreAuth?: boolean };
};

/**
 * rpc.orders.cancel: the hosted form's cancel button. Refused once money is involved, or may be: the
 * order's payment lock (see LockOrderForPayment) and cancel serialise on the order's row. An order
 * past its expiry ends expired instead (answered so).
 */
@Injectable()
export class CancelCheckoutOrder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: OrderEventRecorder,
  ) {}

  async execute(request: OrderAccessRequest): Promise<OrderCancelResult> {
    const access = checkoutKeyAccess('rpc.orders.cancel', request);
    const result = await this.dataSource.transaction(async (manager) => {
      const order = await findOrder(manager, access, true);
      // Asked again (a double click, a retry): answered as it stands, as the first ask left it.
      if (order.status === 'canceled' || order.status === 'expired') return order;
      if (!OPEN_ORDER_STATUSES.includes(order.status)) {
        throw Refusal.notAllowed(`This order is ${order.status} and cannot be canceled`);
      }
      // The attempt holding the lock may be at the acquirer right now, or holds the money.
      if (order.paymentLockId) {
        throw Refusal.notAllowed(
          'A payment of the order is in progress or holds its money; it cannot be canceled now',
        );
      }
      const now = new Date();
      // Its time ran out before the expiry sweep came by: it expired (as the sweep records it, the
      // lock and payments already treat it so), and the merchant hears order.expired, not a cancel.
      const expired = order.expiresAt.getTime() <= now.getTime();
      await this.events.close(manager, order, expired ? 'expired' : 'canceled', now);
      return order;
    });
    this.events.flush();
    return { orderId: result.id, status: result.status };
  }
}
