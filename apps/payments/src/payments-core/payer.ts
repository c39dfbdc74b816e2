import { Injectable } from '@nestjs/common';
import {
  isGuid,
  OPEN_ORDER_STATUSES,
  RpcSubjects,
  type CreatePaymentRequest,
  type InitiatedFrom,
  type MerchantMode,
  type OrderSummary,
  type PaymentType,
} from '@byrd/contracts';
import { DataSource } from 'typeorm';
import {
  allowedCheckoutOrigins,
  ApiError,
  type MerchantContext,
  MerchantDirectory,
  reconciledIsoAmount,
  Refusal,
  Rpc,
} from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';
import { NO_MONEY_HELD } from './order-lock.js';

/** Who is paying: a merchant's backend (API key) or a browser holding an order's checkout key. */
export type PaymentActor = { merchant: MerchantContext } | { checkoutKey: string };

/** Whose payment this is, and the order it pays (if any). */
export interface Payer {
  merchantId: string;
  mode: MerchantMode;
  order: OrderSummary | null;
  initiatedFrom: InitiatedFrom;
  /** The reference the payment carries (`assertOrderRefOf`: always its order's for a shopper). */
  orderRef: string | null;
}

/**
 * Resolves the merchant and order of a payment, the same way for every payment method: a checkout
 * key proves access to one order (the hosted form), an API key may name any order of its merchant.
 */
@Injectable()
export class PayerResolver {
  constructor(
    private readonly rpc: Rpc,
    private readonly dataSource: DataSource,
    private readonly merchants: MerchantDirectory,
  ) {}

  async resolve(
    actor: PaymentActor,
    request: Pick<CreatePaymentRequest, 'orderId' | 'redirectUrl' | 'orderRef'>,
  ): Promise<Payer> {
    let order: OrderSummary | null = null;
    let initiatedFrom: InitiatedFrom = 'Server';
    if ('checkoutKey' in actor) {
      if (!request.orderId)
        throw ApiError.invalidField('orderId', 'is required when paying with a checkoutKey');
      order = await this.orderOfCheckoutKey(request.orderId, actor.checkoutKey);
      assertOrderRefOf(order, request.orderRef);
      if (request.redirectUrl) await this.assertReturnAllowed(order, request.redirectUrl);
      initiatedFrom = 'HostedForm';
    } else if (request.orderId) {
      order = await this.currentOrder(request.orderId, actor.merchant.merchantId);
    }
    // Past its expiry but not yet swept (the sweep runs every few seconds) it is refused too: the
    // lock would refuse it anyway, after the shopper had gone through 3DS for nothing.
    if (order && orderStopsAccepting(order)) {
      const status = OPEN_ORDER_STATUSES.includes(order.status) ? 'expired' : order.status;
      throw Refusal.notAllowed(`Order ${order.orderId} is ${status} and cannot be paid`);
    }
    // Refused early, before any 3DS: the lock itself is taken right before the acquirer is asked
    // (PaymentAuthorizer), and only that decides between attempts racing past this check.
    if (order?.paymentLocked) await this.refuseWhileLocked(order);
    const merchantId = 'merchant' in actor ? actor.merchant.merchantId : order!.merchantId;
    const mode = 'merchant' in actor ? actor.merchant.mode : (order!.merchantMode ?? 'sandbox');
    const orderRef = request.orderRef ?? order?.orderRef ?? null;
    return { merchantId, mode, order, initiatedFrom, orderRef };
  }

  /**
   * A shopper's return address (`?checkoutKey=`) must be on an origin the order or its merchant
   * allows, as the hosted form requires of its unsigned `configs.redirectUrl`: the checkout key is in
   * every order link, and our 3DS pages send the shopper to this address (303, postAuth's
   * callbackUrl), so anyone holding a link could otherwise make them send shoppers to any site.
   */
  private async assertReturnAllowed(order: OrderSummary, redirectUrl: string): Promise<void> {
    const origin = URL.canParse(redirectUrl) ? new URL(redirectUrl).origin : null;
    // The order's own origin needs no look-up (the hosted form's payments send the order's redirectUrl).
    if (origin && allowedCheckoutOrigins(order.redirectUrl, []).includes(origin)) return;
    const allowed = allowedCheckoutOrigins(
      order.redirectUrl,
      await this.merchants.checkoutOrigins(order.merchantId),
    );
    if (origin && allowed.includes(origin)) return;
    throw ApiError.invalidField(
      'redirectUrl',
      allowed.length > 0
        ? `must be on one of the origins the merchant allows for this order (${allowed.join(', ')}); leave it out to return to the order's redirectUrl`
        : "is not allowed for this order: its merchant allows no origin to return to (the order's redirectUrl or the merchant's checkout origins)",
    );
  }

  /**
   * Refuses a payment of an order another attempt holds, by what holds it. None of these refusals is
   * final, so an idempotency-key keeps none: the same request may pay once the order is free.
   * - An attempt of ours that already ended without money: its unlock and its event are on their
   *   way (a lock reply lost while NATS was away), so the lock is let go here (the conditional
   *   no-op orders applies when that event comes) and the payment goes on.
   * - A successful pre-authorisation: held until the merchant captures or releases it, so no
   *   `Retry-After` (a client honouring it would ask every few seconds for days).
   * - Anything else (an attempt at the acquirer now): `Retry-After`, it ends within seconds.
   */
  private async refuseWhileLocked(order: OrderSummary): Promise<void> {
    const holderId = order.paymentLockedBy;
    const holder =
      holderId && isGuid(holderId)
        ? await this.dataSource
            .getRepository(Transaction)
            .findOneBy({ id: holderId, merchantId: order.merchantId })
        : null;
    if (holder && NO_MONEY_HELD.includes(holder.status)) {
      const { lockedBy } = await this.rpc.call(RpcSubjects.OrdersUnlockPayment, {
        orderId: order.orderId,
        merchantId: order.merchantId,
        transactionId: holder.id,
      });
      if (lockedBy === null) return;
    }
    if (holder?.status === 'Success' && holder.isPreAuth) {
      throw Refusal.notAllowedUntilReleased(
        `Order ${order.orderId} is pre-authorised by transaction ${holder.id}: capture it, or release it before paying the order again`,
      );
    }
    throw Refusal.notAllowedYet(
      `Order ${order.orderId} has another payment in progress, or it is already paid`,
    );
  }

  /**
   * What to answer a payment whose lock orders refused (`OrderLock.take`) after `resolve` let it
   * through. Orders refuses alike an order closed meanwhile (final) and one another attempt took
   * meanwhile, which is not final (that attempt may end without money), so the two are told apart by
   * the order as it stands now, as `resolve` refuses a held order: else the payment's
   * idempotency-key would keep the refusal for a day, and its retry be refused after the order is
   * free again.
   */
  async lockRefusal(
    transaction: Pick<Transaction, 'orderId' | 'merchantId'>,
    refusal: ApiError,
  ): Promise<ApiError> {
    let order: OrderSummary;
    try {
      order = await this.currentOrder(transaction.orderId!, transaction.merchantId);
    } catch {
      return Refusal.notAllowedYet(refusal.message); // not known why: the retry will be told
    }
    if (orderStopsAccepting(order)) return refusal;
    if (order.paymentLocked) {
      try {
        await this.refuseWhileLocked(order);
      } catch (error) {
        if (error instanceof ApiError) return error;
        throw error;
      }
    }
    // Free again (its holder ended meanwhile, or its lock was let go just now): the retry may pay.
    return Refusal.notAllowedYet(refusal.message);
  }

  /** The merchant's order as orders has it now (a payment's status may have moved it since). */
  currentOrder(orderId: string, merchantId: string): Promise<OrderSummary> {
    return this.rpc.call(RpcSubjects.OrdersGetForMerchant, { orderId, merchantId });
  }

  /** The order a checkout key opens, whatever its state (404 when it opens none). */
  orderOfCheckoutKey(orderId: string, checkoutKey: string): Promise<OrderSummary> {
    return this.rpc.call('rpc.orders.get', { orderId, checkoutKey });
  }
}

/** Whether the order takes no more payments: closed, or past its expiry (before the sweep marks it). */
export function orderStopsAccepting(order: Pick<OrderSummary, 'status' | 'expiresAt'>): boolean {
  return !OPEN_ORDER_STATUSES.includes(order.status) || Date.parse(order.expiresAt) <= Date.now();
}

/**
 * `end`, or when the order stops accepting payments if that comes first: a shopper's 3DS challenge
 * or an async reference must not outlive it (a challenge answered after it would only be refused by
 * the order, once the issuer had authenticated it).
 */
export function endingWithOrder(end: Date, order: Pick<OrderSummary, 'expiresAt'> | null): Date {
  const orderEnds = order ? Date.parse(order.expiresAt) : Infinity;
  return orderEnds < end.getTime() ? new Date(orderEnds) : end;
}

/**
 * A shopper's payment carries its order's orderRef, or none other: merchants match payments to their
 * orders by it (webhooks, `GET /api/v2/transactions?orderRef=`), so the checkout key of a cheap order
 * must not label its payment with another order's reference (which a shop would then mark paid).
 */
function assertOrderRefOf(order: OrderSummary, orderRef: string | undefined): void {
  if (orderRef != null && orderRef !== order.orderRef) {
    throw ApiError.invalidField(
      'orderRef',
      "is the order's; a payment with the order's checkoutKey cannot change it (leave it out)",
    );
  }
}

/** An order may restrict the methods its shopper is offered (`allowedPaymentMethods`; empty means all). */
export function assertOrderAccepts(order: OrderSummary | null, method: PaymentType): void {
  const allowed = order?.allowedPaymentMethods ?? [];
  if (allowed.length > 0 && !allowed.includes(method)) {
    throw Refusal.methodNotAccepted(
      `Order ${order!.orderId} does not accept ${method}; it accepts ${allowed.join(', ')}`,
    );
  }
}

/**
 * Whether the card payment only pre-authorises. The order decides for a shopper (checkout key):
 * a body asking otherwise is refused. A merchant's own request may decide for its order.
 */
export function preAuthOf(
  actor: PaymentActor,
  request: Pick<CreatePaymentRequest, 'isPreAuth'>,
  order: OrderSummary | null,
): boolean {
  if (!('checkoutKey' in actor)) return Boolean(request.isPreAuth ?? order?.isPreAuth);
  const decided = Boolean(order?.isPreAuth);
  if (request.isPreAuth != null && request.isPreAuth !== decided) {
    throw ApiError.invalidField(
      'isPreAuth',
      `is decided by the order (${decided}); a payment with the order's checkoutKey cannot change it`,
    );
  }
  return decided;
}

/** The amount to charge, in minor units: as sent, and exactly the order's when paying one. */
export function amountToPay(
  request: Pick<CreatePaymentRequest, 'amount' | 'isoAmount' | 'currency'>,
  order: OrderSummary | null,
): number {
  const isoAmount = reconciledIsoAmount(request, request.currency);
  if (isoAmount <= 0) throw ApiError.invalidField('amount', 'must be greater than zero');
  if (order && (order.currency !== request.currency || order.isoAmount !== isoAmount)) {
    throw ApiError.invalidField('amount', `must be the order's amount, ${order.amount} ${order.currency}`);
  }
  return isoAmount;
}
