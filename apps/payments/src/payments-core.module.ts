import { Module } from '@nestjs/common';
import { PayerResolver } from './payments/payer.js';
import { TransactionEventRecorder } from './transactions/transaction-events.js';

/** What every way of paying shares: who pays (payer and order) and the transaction.* events. */
@Module({
  providers: [PayerResolver, TransactionEventRecorder],
  exports: [PayerResolver, TransactionEventRecorder],
})
export class PaymentsCoreModule {}
