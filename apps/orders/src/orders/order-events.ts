import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { createEnvelope, OrderEvents, type OrderEventName, type PaymentMethod } from '@byrd/contracts';
import { Outbox } from '@byrd/platform';
import type { Order } from './order.entity.js';
import { orderEventContent } from './order.presenter.js';

/** Writes order.* events to the outbox, in the transaction that changed the order. */
@Injectable()
export class OrderEventRecorder {
  constructor(private readonly outbox: Outbox) {}

  async record(
    manager: EntityManager,
    order: Order,
    type: OrderEventName,
    paymentMethod: PaymentMethod | null = null,
  ) {
    await this.outbox.append(
      manager,
      createEnvelope(type, {
        merchantId: order.merchantId,
        paymentMethod,
        referenceIds: order.lastTransactionId ? [order.id, order.lastTransactionId] : [order.id],
        data: orderEventContent(order),
      }),
    );
  }

  /**
   * Ends an open order that holds no money, canceled (its shopper's button) or expired (its time ran
   * out), and announces it, in the caller's transaction (the order's row locked).
   */
  async close(manager: EntityManager, order: Order, how: 'canceled' | 'expired', at: Date): Promise<void> {
    order.status = how;
    if (how === 'expired') order.expiredAt = at;
    else order.canceledAt = at;
    await manager.save(order);
    await this.record(manager, order, how === 'expired' ? OrderEvents.Expired : OrderEvents.Canceled);
  }

  /** Publishes what was just committed without waiting for the next relay poll. */
  flush(): void {
    this.outbox.wake();
  }
}
