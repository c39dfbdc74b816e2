import { Global, Module } from '@nestjs/common';
import { WebhookMetrics } from './webhook-metrics.js';

/** The delivery metrics, on the service registry the platform's GET /metrics exports. */
@Global()
@Module({
  providers: [WebhookMetrics],
  exports: [WebhookMetrics],
})
export class MetricsModule {}
