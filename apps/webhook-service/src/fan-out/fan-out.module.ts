import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { FanOutEvent } from './fan-out-event.usecase.js';
import { WebhookEventConsumers } from './event-consumers.js';

@Module({
  imports: [DeliveryModule],
  providers: [FanOutEvent, WebhookEventConsumers],
})
export class FanOutModule {}
