import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OPERATION_TYPES,
  OrderEvents,
  TRANSACTION_STATUSES,
  toIsoAmount,
  transactionOfEventName,
  type EventEnvelope,
  type OrderEventName,
  type TransactionEventContent,
} from '@byrd/contracts';
import { PermanentEventError } from '@byrd/platform';
import { Order, OrderTransaction } from './order.entity.js';
import { OrderEventRecorder } from './order-events.js';
import {
  countedOf,
  deriveOrderStatus,
  fullyReleasedPreAuths,
  holdsMoney,
  partialEvent,
  keepsPaymentLock,
  mergeTransactionStatus,
  sumOf,
  takesLastTransaction,
  transitionEvents,
} from './order-status.js';

/**
 * Moves an order on a transaction.* event: records the transaction's latest status, derives the
 * order status from all of its transactions, and announces a change with the matching order.* event.
 */
@Injectable()
export class ApplyTransactionEvent {
  constructor(private readonly events: OrderEventRecorder) {}

  async execute(envelope: EventEnvelope, manager: EntityManager): Promise<void> {
    const content = envelope.data as TransactionEventContent;
    if (!content?.orderId) return; // a payment without an order: nothing for orders to track
    // The content says what happened; an event lacking a field falls back on what its name says.
    const named = transactionOfEventName(envelope.type);
    const operationType = OPERATION_TYPES.includes(content.operationType)
      ? content.operationType
      : named.operationType;
    const status = TRANSACTION_STATUSES.includes(content.status) ? content.status : named.status;
    if (!operationType || !status || !content.transactionId) {
      throw new PermanentEventError(
        `${envelope.type} ${envelope.id} lacks a transaction id, operation or status`,
      );
    }

    const order = await manager.getRepository(Order).findOne({
      where: { id: content.orderId, merchantId: envelope.merchantId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!order)
      throw new PermanentEventError(
        `Order ${content.orderId} of merchant ${envelope.merchantId} does not exist`,
      );

    const transactions = manager.getRepository(OrderTransaction);
    const known = await transactions.findOneBy({ transactionId: content.transactionId });
    const refundedAtOnce = known?.refundedAtOnce === true || content.refundedAtOnce === true;
    const merged = mergeTransactionStatus(known?.status, status, refundedAtOnce);
    await transactions.save({
      transactionId: content.transactionId,
      orderId: order.id,
      operationType,
      status: merged,
      isoAmount: content.isoAmount ?? toIsoAmount(content.amount, content.currency),
      paymentMethod: envelope.paymentMethod,
      sourceTransactionId: content.sourceTransactionId ?? null,
      refundedAtOnce,
    });
    const all = await transactions.findBy({ orderId: order.id });
    for (const released of fullyReleasedPreAuths(all)) {
      released.status = 'Canceled';
      await transactions.update({ transactionId: released.transactionId }, { status: 'Canceled' });
    }
    // The durable way an order becomes payable again after its locking attempt took no money
    // (payments also unlocks at once over RPC; both are the same conditional no-op when repeated).
    const holder = order.paymentLockId && all.find((t) => t.transactionId === order.paymentLockId);
    if (holder && !keepsPaymentLock(holder)) {
      order.paymentLockId = null;
      order.paymentLockedAt = null;
    }
    const before = order.status;
    order.status = deriveOrderStatus({
      canceledAt: order.canceledAt,
      expiredAt: order.expiredAt,
      transactions: all,
    });
    // The last transaction is the newest one, or the one that just moved the order: a later event
    // of an older attempt (a 3DS challenge left to lapse after another card paid) does not take it,
    // nor does its first event when it comes after what holds the order (takesLastTransaction).
    const transaction = all.find((t) => t.transactionId === content.transactionId)!;
    if (order.status !== before || (!known && takesLastTransaction(transaction, order, all)))
      order.lastTransactionId = content.transactionId;
    const counted = countedOf(all);
    order.refundedIsoAmount = sumOf(counted, ['Refund'], 'Success');
    // The order newly holds money: this event's payment, or one a refund's event named before it.
    const newlyPaid = !holdsMoney(before) && holdsMoney(order.status);
    if (newlyPaid) {
      const paying = counted.filter(
        (t) => (t.operationType === 'Payment' || t.operationType === 'Capture') && t.status === 'Success',
      );
      order.paymentId =
        paying.find((t) => t.transactionId === content.transactionId)?.transactionId ??
        paying[0].transactionId;
    }
    // A refund applied before the payment it gave back (their events came the other way round):
    // order.paid names the payment; the refund's announcement, and the order from then on, the refund.
    const earlierRefund = newlyPaid && operationType !== 'Refund' ? latestRefund(counted) : undefined;
    const announce = (change: OrderEventName) => {
      if (earlierRefund && (change === OrderEvents.Refunded || change === OrderEvents.PartialRefunded))
        order.lastTransactionId = earlierRefund.transactionId;
      return this.events.record(manager, order, change, envelope.paymentMethod);
    };

    for (const change of transitionEvents(before, order.status)) await announce(change);
    const newlySucceeded =
      status === 'Success' && known?.status !== 'Success' && content.refundedAtOnce !== true;
    const partial = newlySucceeded ? partialEvent(operationType, order, all) : null;
    if (partial) {
      // It announces this transaction's success: another refund asked for meanwhile is not it.
      order.lastTransactionId = content.transactionId;
      await announce(partial);
    }
    // Refunds applied before the payment they gave back: announced now that the money is known.
    const refundedBefore = earlierRefund ? partialEvent('Refund', order, all) : null;
    if (refundedBefore) await announce(refundedBefore);
    // As merged: a late TemporaryFailed after the attempt's final outcome announces nothing, nor
    // one announced again (payments' recovery, another producer). Only a payment attempt's: a
    // capture, refund or release timing out is no failure "during payment" (the order may be paid
    // already), and is settled later like any of them.
    const paying = operationType === 'Payment' || operationType === 'PreAuth';
    const newlyTimedOut = merged === 'TemporaryFailed' && known?.status !== 'TemporaryFailed';
    if (paying && newlyTimedOut && status === 'TemporaryFailed') await announce(OrderEvents.TemporaryFailed);
    await manager.save(order);
  }
}

/** The successful refund recorded last, if any. */
function latestRefund(transactions: OrderTransaction[]): OrderTransaction | undefined {
  return transactions
    .filter((t) => t.operationType === 'Refund' && t.status === 'Success')
    .reduce<OrderTransaction | undefined>(
      (latest, t) => (latest && latest.createdAt > t.createdAt ? latest : t),
      undefined,
    );
}
