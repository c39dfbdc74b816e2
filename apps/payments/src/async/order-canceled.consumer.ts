import { Injectable, type OnModuleInit } from '@nestjs/common';
import { OrderEvents, type EventEnvelope, type OrderEventContent } from '@byrd/contracts';
import { EventConsumers, PermanentEventError, type EventConsumer } from '@byrd/platform';
import { OpenAttempts } from './open-attempts.js';

/**
 * A canceled order's open Multibanco references and MB WAY requests are voided at the processor
 * (async attempts do not hold the order, so the cancel did not wait for them): a shopper who pays
 * one later would only be charged and refunded at once.
 */
@Injectable()
export class OrderCanceledConsumer implements EventConsumer, OnModuleInit {
  readonly durable = 'payments-order-canceled';
  readonly subject = OrderEvents.Canceled;

  constructor(
    private readonly consumers: EventConsumers,
    private readonly openAttempts: OpenAttempts,
  ) {}

  onModuleInit(): void {
    this.consumers.register(this);
  }

  /**
   * The processor's voids are outside calls, and each record is canceled in its own transaction:
   * the inbox's commits only after every attempt is voided, so a crash or a failed void retries them
   * (voiding again one already voided changes nothing).
   */
  async handle(envelope: EventEnvelope): Promise<void> {
    const { orderId } = envelope.data as OrderEventContent;
    if (!orderId) throw new PermanentEventError(`${envelope.type} ${envelope.id} names no order`);
    await this.openAttempts.voidAllOf(envelope.merchantId, orderId);
  }
}
