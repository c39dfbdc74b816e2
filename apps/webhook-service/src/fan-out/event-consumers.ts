import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventEnvelope } from '@byrd/contracts';
import { EventConsumers, type EventConsumer } from '@byrd/platform';
import { DeliveryWorker } from '../delivery/delivery-worker.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { FanOutEvent } from './fan-out-event.usecase.js';

/**
 * The three durable consumers of the EVENTS stream (NATS 2.9 allows one filter subject per
 * consumer). Each runs the fan-out in the transaction that records the events in the inbox (a burst
 * is taken as one batch); the platform acks after commit, and this process's delivery worker is
 * woken then.
 */
class FamilyConsumer implements EventConsumer {
  /** The setting of each webhook created by the last batch, until its commit. */
  private created: string[] = [];

  constructor(
    readonly durable: string,
    readonly subject: string,
    private readonly fanOut: FanOutEvent,
    private readonly worker: DeliveryWorker,
    private readonly metrics: WebhookMetrics,
  ) {}

  handle(envelope: EventEnvelope, manager: EntityManager): Promise<void> {
    return this.handleBatch([envelope], manager);
  }

  /** A burst of events becomes webhooks in one statement and one commit. */
  async handleBatch(envelopes: EventEnvelope[], manager: EntityManager): Promise<void> {
    this.created = await this.fanOut.execute(envelopes, manager);
  }

  afterCommit(): void {
    if (this.created.length === 0) return;
    this.metrics.created.inc(this.created.length);
    this.worker.wake({ settingsIds: new Set(this.created) });
    this.created = [];
  }
}

@Injectable()
export class WebhookEventConsumers implements OnModuleInit {
  constructor(
    private readonly consumers: EventConsumers,
    private readonly fanOut: FanOutEvent,
    private readonly worker: DeliveryWorker,
    private readonly metrics: WebhookMetrics,
  ) {}

  onModuleInit(): void {
    for (const [durable, subject] of [
      ['webhooks-orders', 'order.>'],
      ['webhooks-transactions', 'transaction.>'],
      ['webhooks-chargebacks', 'chargeback.>'],
    ]) {
      this.consumers.register(new FamilyConsumer(durable, subject, this.fanOut, this.worker, this.metrics));
    }
  }
}
