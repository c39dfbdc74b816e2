import { Module } from '@nestjs/common';
import { ChargebacksModule } from '../chargebacks/chargebacks.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { OperationsController } from './operations.controller.js';
import { RunOperation } from './run-operation.usecase.js';

/** Capture, refund and release of earlier transactions. */
@Module({
  imports: [PaymentsModule, ChargebacksModule],
  controllers: [OperationsController],
  providers: [RunOperation],
  exports: [RunOperation],
})
export class OperationsModule {}
