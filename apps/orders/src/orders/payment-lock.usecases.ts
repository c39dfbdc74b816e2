import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  isGuid,
  OPEN_ORDER_STATUSES,
  type OrderPaymentLock,
  type OrderPaymentLockRequest,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { findOrder } from './checkout.usecases.js';
import { Order, OrderTransaction } from './order.entity.js';
import { keepsPaymentLock } from './order-status.js';

/**
 * rpc.orders.lockPayment: payments reserves the order for one attempt right before it asks the
 * acquirer. Taken under the order's row lock, so of any number of concurrent attempts (on any
 * replica) exactly one gets it, and a cancel or the expiry sweep either runs before (the attempt is
 * refused) or after (they are refused). Asking again for the same attempt is a no-op (retries).
 *
 * An attempt whose end (holding no money) orders already recorded is refused: its request is stale,
 * handled late by a replica that was paused while payments gave up on it. Its event, the one thing
 * that frees a lock for good, has come and gone, so a lock taken now would hold the order forever.
 * (Had the event come after the lock, it would free it: ApplyTransactionEvent; both take the order's
 * row lock, so one of the two always sees the other.)
 */
@Injectable()
export class LockOrderForPayment {
  constructor(private readonly dataSource: DataSource) {}

  async execute(request: OrderPaymentLockRequest): Promise<OrderPaymentLock> {
    assertAttemptNamed(request);
    return this.dataSource.transaction(async (manager) => {
      const order = await findOrder(manager, request, true);
      if (order.paymentLockId === request.transactionId) return lockOf(order);
      const attempt = await manager.findOneBy(OrderTransaction, {
        transactionId: request.transactionId,
        orderId: order.id,
      });
      if (attempt && !keepsPaymentLock(attempt)) {
        throw Refusal.notAllowed(
          `Payment ${attempt.transactionId} has already ended (${attempt.refundedAtOnce ? 'refunded at once' : attempt.status}) and cannot hold order ${order.id}`,
        );
      }
      if (order.paymentLockId) {
        throw Refusal.notAllowed(`Order ${order.id} has another payment in progress, or it is already paid`);
      }
      if (!OPEN_ORDER_STATUSES.includes(order.status)) {
        throw Refusal.notAllowed(`Order ${order.id} is ${order.status} and cannot be paid`);
      }
      if (order.expiresAt.getTime() <= Date.now()) {
        throw Refusal.notAllowed(
          `Order ${order.id} expired at ${order.expiresAt.toISOString()} and cannot be paid`,
        );
      }
      order.paymentLockId = request.transactionId;
      order.paymentLockedAt = new Date();
      await manager.update(
        Order,
        { id: order.id },
        { paymentLockId: order.paymentLockId, paymentLockedAt: order.paymentLockedAt },
      );
      return lockOf(order);
    });
  }
}

/**
 * rpc.orders.unlockPayment: the attempt ended holding no money (declined, failed, voided, or a
 * released pre-authorisation). Only the holder's own id unlocks; anything else is a no-op, so a late
 * or repeated unlock never frees an order another attempt holds. The transaction.* events clear the
 * lock too (ApplyTransactionEvent): this call only makes the order payable again without waiting.
 */
@Injectable()
export class UnlockOrderPayment {
  constructor(private readonly dataSource: DataSource) {}

  async execute(request: OrderPaymentLockRequest): Promise<OrderPaymentLock> {
    assertAttemptNamed(request);
    const order = await findOrder(this.dataSource.manager, request);
    if (await releasePaymentLock(this.dataSource.manager, order.id, request.transactionId))
      return { orderId: order.id, lockedBy: null };
    // Not this attempt's lock, or no longer: the attempt's event may have released it while this
    // waited for the row. Answer the lock as it stands now, not as first read (a caller told the
    // attempt still holds it would refuse the order's next payment).
    const now = await findOrder(this.dataSource.manager, request);
    return { orderId: now.id, lockedBy: now.paymentLockId };
  }
}

/** Clears the order's payment lock if (and only if) `transactionId` holds it: one conditional UPDATE. */
export async function releasePaymentLock(
  manager: EntityManager,
  orderId: string,
  transactionId: string,
): Promise<boolean> {
  const result = await manager.update(
    Order,
    { id: orderId, paymentLockId: transactionId },
    { paymentLockId: null, paymentLockedAt: null },
  );
  return (result.affected ?? 0) > 0;
}

function lockOf(order: Order): OrderPaymentLock {
  return { orderId: order.id, lockedBy: order.paymentLockId };
}

/**
 * The attempt a lock or unlock is for must be named (a payment's GUID): with none, `null` would
 * equal an unlocked order's `null` and answer as if the lock were taken.
 */
function assertAttemptNamed(request: OrderPaymentLockRequest): void {
  if (!isGuid(request.transactionId)) throw ApiError.invalidField('transactionId', 'must be a GUID');
}
