import { Global, Module } from '@nestjs/common';
import { WebhookMetrics } from './webhook-metrics.js';
import { MetricsController } from './metrics.controller.js';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [WebhookMetrics],
  exports: [WebhookMetrics],
})
export class MetricsModule {}
