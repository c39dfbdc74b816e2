import { Module } from '@nestjs/common';
import { OrderLock } from './order-lock.js';
import { PayerResolver } from './payer.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';

/** What every way of paying shares: who pays (payer and order), the order's lock and the transaction.* events. */
@Module({
  providers: [PayerResolver, OrderLock, TransactionEventRecorder],
  exports: [PayerResolver, OrderLock, TransactionEventRecorder],
})
export class PaymentsCoreModule {}
