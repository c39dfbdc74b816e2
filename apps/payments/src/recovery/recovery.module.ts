import { Module } from '@nestjs/common';
import { OperationsModule } from '../operations/operations.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { RecoverAcquirerCalls } from './recover-acquirer-calls.js';

/** Settles acquirer calls whose answer was never recorded (crash, timeout, unknown outcome). */
@Module({
  imports: [PaymentsModule, OperationsModule],
  providers: [RecoverAcquirerCalls],
  exports: [RecoverAcquirerCalls],
})
export class RecoveryModule {}
