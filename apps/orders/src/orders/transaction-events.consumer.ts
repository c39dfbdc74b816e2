import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventEnvelope } from '@byrd/contracts';
import { EventConsumers, type EventConsumer } from '@byrd/platform';
import { ApplyTransactionEvent } from './apply-transaction-event.usecase.js';
import { OrderEventRecorder } from './order-events.js';

/** Durable consumer of transaction.* events that drives the order state machine. */
@Injectable()
export class TransactionEventsConsumer implements EventConsumer, OnModuleInit {
  readonly durable = 'orders-transactions';
  readonly subject = 'transaction.>';

  constructor(
    private readonly consumers: EventConsumers,
    private readonly applyTransactionEvent: ApplyTransactionEvent,
    private readonly events: OrderEventRecorder,
  ) {}

  onModuleInit(): void {
    this.consumers.register(this);
  }

  /** Payments that belong to no order are none of orders' business. */
  accepts(envelope: EventEnvelope): boolean {
    return Boolean((envelope.data as { orderId?: string | null }).orderId);
  }

  handle(envelope: EventEnvelope, manager: EntityManager): Promise<void> {
    return this.applyTransactionEvent.execute(envelope, manager);
  }

  afterCommit(): void {
    this.events.flush();
  }
}
