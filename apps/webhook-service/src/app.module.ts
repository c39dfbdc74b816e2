import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformModule } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from './config.js';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from './database.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { SettingsModule } from './settings/settings.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { FanOutModule } from './fan-out/fan-out.module.js';
import { DeliveryModule } from './delivery/delivery.module.js';
import { RetentionModule } from './retention/retention.module.js';
import { ListenModule } from './listen/listen.module.js';

export const SERVICE_NAME = 'webhook-service';

@Module({})
export class AppModule {
  static forRoot(config: WebhookConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          serviceName: SERVICE_NAME,
          config,
          entities: WEBHOOK_ENTITIES,
          migrations: WEBHOOK_MIGRATIONS,
          configToken: WEBHOOK_CONFIG,
        }),
        MetricsModule,
        SettingsModule,
        WebhooksModule,
        FanOutModule,
        DeliveryModule,
        RetentionModule,
        ListenModule,
      ],
    };
  }
}
