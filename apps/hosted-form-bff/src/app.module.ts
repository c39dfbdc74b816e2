import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformModule, RateLimitModule } from '@byrd/platform';
import { ApiResponseHeaders } from './common/api-headers.js';
import { CHECKOUT_CONFIG, type CheckoutConfig } from './config.js';
import { CheckoutOrdersModule } from './orders/checkout-orders.module.js';
import { CheckoutPageModule } from './page/page.module.js';
import { resolveWebDir } from './page/web-dir.js';
import { CheckoutPaymentsModule } from './payments/checkout-payments.module.js';

export const SERVICE_NAME = 'hosted-form-bff';

/**
 * The hosted payment form: its static page and the API the page calls, authorised by the order's
 * checkout key. No database: orders and payments answer over NATS request/reply.
 */
@Module({})
export class AppModule {
  /** Throws a ConfigError naming the fix when the page is not built. */
  static forRoot(config: CheckoutConfig): DynamicModule {
    const webDir = resolveWebDir(config.HOSTED_FORM_WEB_DIR);
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          serviceName: SERVICE_NAME,
          config,
          database: false,
          configToken: CHECKOUT_CONFIG,
        }),
        RateLimitModule.forRoot(config),
        CheckoutOrdersModule,
        CheckoutPaymentsModule,
        CheckoutPageModule.forRoot(webDir),
      ],
      providers: [ApiResponseHeaders],
    };
  }
}
