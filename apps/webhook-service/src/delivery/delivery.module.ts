import { Module } from '@nestjs/common';
import { EgressModule } from '../egress/egress.module.js';
import { SecretsModule } from '../secrets/settings-secrets.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { DeliveryRepository } from './delivery.repository.js';
import { DeliverWebhook } from './deliver-webhook.usecase.js';
import { DeliveryWorker } from './delivery-worker.js';
import { EndpointObservations } from './endpoint-observations.js';

@Module({
  imports: [EgressModule, SecretsModule],
  providers: [DeliveryRepository, AttemptRecorder, EndpointObservations, DeliverWebhook, DeliveryWorker],
  exports: [DeliveryWorker],
})
export class DeliveryModule {}
