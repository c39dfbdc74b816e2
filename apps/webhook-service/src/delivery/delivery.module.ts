import { Module } from '@nestjs/common';
import { EgressModule } from '../egress/egress.module.js';
import { DeliveryQueue } from './delivery-queue.js';
import { DeliverWebhook } from './deliver-webhook.usecase.js';
import { DeliveryWorker } from './delivery-worker.js';

@Module({
  imports: [EgressModule],
  providers: [DeliveryQueue, DeliverWebhook, DeliveryWorker],
  exports: [DeliveryWorker],
})
export class DeliveryModule {}
