import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { guidOf } from '@byrd/contracts';
import { IdempotencyGuard, orderPaymentsKey, RateLimiter, type AuthenticatedRequest } from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';

const ORDER_NAMED_BY = 'payments:checkout-attempt';

/** How a payment route's request names the order it pays: the body's `orderId`, or its payment's order. */
type OrderNamedBy = 'body' | 'payment';

/** Counts the route's `?checkoutKey=` calls as payment attempts (CheckoutAttemptLimitGuard). */
export const CheckoutPaymentAttempt = (orderNamedBy: OrderNamedBy) =>
  SetMetadata(ORDER_NAMED_BY, orderNamedBy);

/**
 * Holds browsers paying with an order's checkout key (the SDK's `?checkoutKey=`, which every order link
 * carries) to the hosted form's payment-attempt limits, per client address and per order with its key,
 * in the bucket the form's backend counts in: else one link is an unlimited card-testing oracle past
 * the form's limits (a declined card frees the order for the next at once). A global guard, before the
 * idempotency-key's claim (PlatformModule `guards`): a refused attempt has written nothing, nor asked
 * orders. A merchant's backend (API key) is not limited here, nor the form's own payments
 * (`rpc.payments.create`: no HTTP route, its backend counted them).
 *
 * What counts is a card tried: a card payment created without its card is not an attempt (its
 * `/pay`, which brings the card, is), else a two-step payment counted twice and the SDK got half the
 * form's attempts. Such creates count apart, per client address and per order, to the same limits
 * (`payment-creates`, `order-payment-creates`): unlimited, one link made a payment row and two events
 * per request, and a new order pair per request went past the order's count. A repeat of a request its
 * idempotency-key already answered is not counted: it gets its answer replayed, not a 429 once the
 * limit is reached meanwhile.
 */
@Injectable()
export class CheckoutAttemptLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
    private readonly dataSource: DataSource,
    private readonly idempotency: IdempotencyGuard,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const namedBy = this.reflector.get<OrderNamedBy | undefined>(ORDER_NAMED_BY, context.getHandler());
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!namedBy || request.merchant) return true;
    if (await this.idempotency.repeatsAnsweredRequest(request)) return true;
    const { checkoutKey } = (request.query ?? {}) as { checkoutKey?: unknown };
    const orderId =
      namedBy === 'body'
        ? (request.body as { orderId?: unknown } | null | undefined)?.orderId
        : await this.orderOfPayment(request);
    const scopes =
      namedBy === 'body' && isCardLess(request.body)
        ? (['payment-creates', 'order-payment-creates'] as const)
        : (['payments', 'order-payments'] as const);
    await this.limiter.check(request, scopes, orderPaymentsKey(orderId, checkoutKey));
    return true;
  }

  /** `/pay` names its order only through its payment (a read; nothing is written before the limit). */
  private async orderOfPayment(request: AuthenticatedRequest): Promise<string | null> {
    const { transactionId } = (request.params ?? {}) as { transactionId?: unknown };
    // As the route's GuidParam reads it (it runs after the guards): any case names the payment.
    const id = guidOf(transactionId);
    if (id === null) return null;
    const payment = await this.dataSource
      .getRepository(Transaction)
      .findOne({ select: { id: true, orderId: true }, where: { id } });
    return payment?.orderId ?? null;
  }
}

/** A card payment's create without its card or token: the first step of a two-step payment. */
function isCardLess(body: unknown): boolean {
  const { type, card, tokenId } = (body ?? {}) as { type?: unknown; card?: unknown; tokenId?: unknown };
  return typeof type === 'string' && type.trim().toLowerCase() === 'card' && card == null && tokenId == null;
}
