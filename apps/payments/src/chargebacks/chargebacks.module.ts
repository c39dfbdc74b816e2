import { Module } from '@nestjs/common';
import { PaymentsCoreModule } from '../payments-core/payments-core.module.js';
import { ChargebackEventRecorder } from './chargeback-events.js';
import { ChargebackRepository } from './chargeback.repository.js';
import { GetChargeback } from './get-chargeback.usecase.js';
import { MoveChargeback } from './move-chargeback.usecase.js';
import { OpenChargeback } from './open-chargeback.usecase.js';

/** Chargebacks on settled payments. Only the sandbox opens and moves them for now (SandboxModule). */
@Module({
  imports: [PaymentsCoreModule],
  providers: [ChargebackEventRecorder, ChargebackRepository, OpenChargeback, MoveChargeback, GetChargeback],
  exports: [ChargebackRepository, OpenChargeback, MoveChargeback, GetChargeback],
})
export class ChargebacksModule {}
