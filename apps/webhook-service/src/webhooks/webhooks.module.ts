import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { EgressModule } from '../egress/egress.module.js';
import { SecretsModule } from '../secrets/settings-secrets.js';
import { WebhooksController } from './webhooks.controller.js';
import { ListAttempts, ListWebhooks } from './webhook-history.usecases.js';
import { ResendWebhooks } from './resend-webhooks.usecase.js';

@Module({
  imports: [EgressModule, SecretsModule, DeliveryModule],
  controllers: [WebhooksController],
  providers: [ListWebhooks, ListAttempts, ResendWebhooks],
})
export class WebhooksModule {}
