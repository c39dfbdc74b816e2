import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  isAsyncPaymentType,
  isGuid,
  type AsyncPaymentSimulation,
  type ReturnCode,
  type TransactionResponse,
  type TransactionStatus,
} from '@byrd/contracts';
import { ApiError, ErrorKind } from '@byrd/platform';
import { applyOutcome } from '../payments/payment-authorizer.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';
import { presentTransaction } from '../transactions/transaction.presenter.js';

interface Outcome {
  status: TransactionStatus;
  code: ReturnCode;
}

/**
 * What the shopper did with a pending Multibanco or MB WAY payment. Paying succeeds (BYRD200);
 * declining in the MB WAY app is the shopper canceling (BYRD208, transaction.payment.canceled);
 * a lapsed reference or request is rejected by the network (BYRD205, transaction.payment.failed).
 */
function outcomeOf(transaction: Transaction, simulation: AsyncPaymentSimulation, now: Date): Outcome {
  switch (simulation) {
    case 'pay':
      if (transaction.expiresAt <= now) {
        throw rejected(
          `Transaction ${transaction.id} expired at ${transaction.expiresAt.toISOString()} and can no longer be paid; simulate expire`,
        );
      }
      return { status: 'Success', code: 'BYRD200' };
    case 'refuse':
      if (transaction.paymentMethod !== 'mbway') {
        throw rejected(
          'Only an MB WAY request can be refused; a Multibanco reference can only expire unpaid',
        );
      }
      return { status: 'Canceled', code: 'BYRD208' };
    case 'expire':
      return { status: 'Denied', code: 'BYRD205' };
  }
}

function rejected(message: string): ApiError {
  return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD205' });
}

/**
 * Settles a pending async payment with the shopper's outcome: what a real processor's notification
 * does, driven in the sandbox by `POST /api/v2/sandbox/payments/{transactionId}/{action}`.
 */
@Injectable()
export class SettleAsyncPayment {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
  ) {}

  async execute(
    merchantId: string,
    transactionId: string,
    simulation: AsyncPaymentSimulation,
  ): Promise<TransactionResponse> {
    const missing = () => ApiError.notFound(`Transaction ${transactionId}`);
    if (!isGuid(transactionId)) throw missing();
    const settled = await this.dataSource.transaction(async (manager) => {
      // The row lock makes a second, concurrent outcome wait and then find the payment settled.
      const transaction = await manager.getRepository(Transaction).findOne({
        where: { id: transactionId, merchantId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!transaction) throw missing();
      if (!isAsyncPaymentType(transaction.paymentMethod)) {
        throw rejected(
          `Transaction ${transactionId} is a ${transaction.paymentMethod} payment; only multibanco and mbway payments wait for the shopper`,
        );
      }
      if (transaction.status !== 'Processing') {
        throw rejected(`Transaction ${transactionId} is ${transaction.status}, no longer pending`);
      }

      const now = new Date();
      const { status, code } = outcomeOf(transaction, simulation, now);
      applyOutcome(transaction, status, code);
      transaction.updatedAt = now;
      if (simulation === 'expire') transaction.expiresAt = now; // the reference stopped accepting payment now
      await manager.update(
        Transaction,
        { id: transaction.id, merchantId },
        {
          status: transaction.status,
          code: transaction.code,
          description: transaction.description,
          expiresAt: transaction.expiresAt,
          updatedAt: now,
        },
      );
      await this.events.record(manager, transaction);
      return transaction;
    });
    this.events.flush();
    return presentTransaction(settled, null);
  }
}
