import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformModule } from '@byrd/platform';
import { ORDERS_CONFIG, type OrdersConfig } from './config.js';
import { OrdersModule } from './orders/orders.module.js';
import { CheckoutOriginsModule } from './checkout-origins/checkout-origins.module.js';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from './database.js';

export const SERVICE_NAME = 'orders';

@Module({})
export class AppModule {
  static forRoot(config: OrdersConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          serviceName: SERVICE_NAME,
          config,
          entities: ORDERS_ENTITIES,
          migrations: ORDERS_MIGRATIONS,
          configToken: ORDERS_CONFIG,
        }),
        OrdersModule,
        CheckoutOriginsModule,
      ],
    };
  }
}
