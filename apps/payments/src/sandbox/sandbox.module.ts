import { Module } from '@nestjs/common';
import { AsyncPaymentsModule } from '../async/async-payments.module.js';
import { ChargebacksModule } from '../chargebacks/chargebacks.module.js';
import { SandboxChargebacksController } from './sandbox-chargebacks.controller.js';
import { SandboxPaymentsController } from './sandbox-payments.controller.js';

/**
 * `/api/v2/sandbox/...`: stands in for the shopper of async payments and for the card schemes, so
 * integrations can drive every webhook without real money. Sandbox keys only.
 */
@Module({
  imports: [AsyncPaymentsModule, ChargebacksModule],
  controllers: [SandboxPaymentsController, SandboxChargebacksController],
})
export class SandboxModule {}
