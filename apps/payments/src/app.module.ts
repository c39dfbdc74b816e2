import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformModule, RateLimitModule } from '@byrd/platform';
import { PAYMENTS_CONFIG, type PaymentsConfig } from './config.js';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from './database.js';
import { PaymentsModule } from './payments/payments.module.js';
import { CheckoutAttemptLimitGuard } from './payments/checkout-attempt-limit.guard.js';
import { SandboxModule } from './sandbox/sandbox.module.js';
import { ChargebacksModule } from './chargebacks/chargebacks.module.js';
import { OperationsModule } from './operations/operations.module.js';
import { ThreeDSModule } from './three-ds/three-ds.module.js';
import { CheckoutModule } from './checkout/checkout.module.js';
import { RecoveryModule } from './recovery/recovery.module.js';
import { VerificationModule } from './verification/verification.module.js';

export const SERVICE_NAME = 'payments';

@Module({})
export class AppModule {
  static forRoot(config: PaymentsConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          serviceName: SERVICE_NAME,
          config,
          entities: PAYMENTS_ENTITIES,
          migrations: PAYMENTS_MIGRATIONS,
          configToken: PAYMENTS_CONFIG,
          guards: [CheckoutAttemptLimitGuard],
        }),
        RateLimitModule.forRoot(config),
        PaymentsModule,
        SandboxModule,
        ChargebacksModule,
        OperationsModule,
        ThreeDSModule,
        CheckoutModule,
        RecoveryModule,
        VerificationModule,
      ],
    };
  }
}
