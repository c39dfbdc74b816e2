import { Module } from '@nestjs/common';
import { OrderLock } from './order-lock.js';
import { PayerResolver } from './payer.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';

/**
 * What every way of paying shares: who pays (payer and order), the order's lock, the transactions
 * table and the transaction.* events.
 */
@Module({
  providers: [PayerResolver, OrderLock, TransactionRepository, TransactionEventRecorder],
  exports: [PayerResolver, OrderLock, TransactionRepository, TransactionEventRecorder],
})
export class PaymentsCoreModule {}
