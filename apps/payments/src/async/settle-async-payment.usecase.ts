import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import {
  isAsyncPaymentType,
  isGuid,
  type AsyncPaymentSimulation,
  type ReturnCode,
  type TransactionResponse,
  type TransactionStatus,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { OrderLock } from '../payments-core/order-lock.js';
import { applyOutcome } from '../transactions/outcome.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { presentTransaction } from '../transactions/transaction.presenter.js';
import { OpenAttempts } from './open-attempts.js';

/** Told to orders with the payment and its refund: neither is the order's (TransactionEventContent). */
const REFUNDED_AT_ONCE = { refundedAtOnce: true };

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
        throw Refusal.notAllowed(
          `Transaction ${transaction.id} expired at ${transaction.expiresAt.toISOString()} and can no longer be paid; simulate expire`,
        );
      }
      return { status: 'Success', code: 'BYRD200' };
    case 'refuse':
      if (transaction.paymentMethod !== 'mbway') {
        throw Refusal.notAllowed(
          'Only an MB WAY request can be refused; a Multibanco reference can only expire unpaid',
        );
      }
      return { status: 'Canceled', code: 'BYRD208' };
    case 'expire':
      return { status: 'Denied', code: 'BYRD205' };
  }
}

/**
 * Whether we ended the payment ourselves, without the processor's word, so its money may still
 * come: Error is only our MB WAY request failing (CreateAsyncPayment: the push may have reached the
 * phone), Canceled BYRD205 only our void (OpenAttempts). The processor's own ends (the shopper's
 * refusal, Canceled BYRD208; a lapse, Denied) are final: a payment notified after them is refused.
 */
function endedByUs(transaction: Transaction): boolean {
  return (
    transaction.status === 'Error' || (transaction.status === 'Canceled' && transaction.code === 'BYRD205')
  );
}

/** Whether the payment holds its order's money: it took money that was not refunded at once. */
function holdsOrderMoney(transaction: Transaction): boolean {
  return transaction.status === 'Success' && transaction.refundedIsoAmount < transaction.isoAmount;
}

/**
 * Settles a pending async payment with the shopper's outcome: what a real processor's notification
 * does, driven in the sandbox by `POST /api/v2/sandbox/payments/{transactionId}/{action}`.
 *
 * Money that arrives takes the order's lock first (rpc.orders.lockPayment), like a card
 * authorisation. When another payment already holds the order (it was paid another way before this
 * reference was voided), or we had ended this payment ourselves (`endedByUs`), the money is still
 * recorded, as it did arrive, and refunded at once in the same database transaction: the order is
 * never charged twice, the shopper's money is never lost, and both movements are announced.
 */
@Injectable()
export class SettleAsyncPayment {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
    private readonly orderLock: OrderLock,
    private readonly openAttempts: OpenAttempts,
  ) {}

  async execute(
    merchantId: string,
    transactionId: string,
    simulation: AsyncPaymentSimulation,
  ): Promise<TransactionResponse> {
    const missing = () => ApiError.notFound(`Transaction ${transactionId}`);
    if (!isGuid(transactionId)) throw missing();
    const repository = this.dataSource.getRepository(Transaction);
    const pending = await repository.findOneBy({ id: transactionId, merchantId });
    if (!pending) throw missing();
    assertSettles(pending, simulation);
    // A lapsed request is refused before it takes the order: a lock it could only give back on its
    // way out (an unlock lost, a crash) would hold the order until the lapse sweep ended it.
    if (simulation === 'pay') outcomeOf(pending, simulation, new Date());
    // Taken before the row lock below: no remote call is ever made while holding it. A payment we
    // ended is not the order's any more (it may be paid another way): it takes no lock.
    const takesLock = simulation === 'pay' && pending.status === 'Processing';
    const refusal = takesLock ? await this.orderLock.take(pending) : null;

    const settled = await this.dataSource
      .transaction(async (manager) => {
        // The row lock makes a second, concurrent outcome wait and then find the payment settled,
        // and orders this one with our own end of it (a failed MB WAY request, a void).
        const transaction = await manager.getRepository(Transaction).findOneOrFail({
          where: { id: transactionId, merchantId },
          lock: { mode: 'pessimistic_write' },
        });
        assertSettles(transaction, simulation);
        const refundAtOnce = Boolean(refusal) || endedByUs(transaction);

        const now = new Date();
        const { status, code } = outcomeOf(transaction, simulation, now);
        applyOutcome(transaction, status, code);
        transaction.updatedAt = now;
        if (simulation === 'expire') transaction.expiresAt = now; // the reference stopped accepting payment now
        if (refundAtOnce) {
          transaction.refundedIsoAmount = transaction.isoAmount;
          transaction.refundedAtOnce = true;
        }
        await manager.update(
          Transaction,
          { id: transaction.id, merchantId },
          {
            status: transaction.status,
            code: transaction.code,
            description: transaction.description,
            expiresAt: transaction.expiresAt,
            refundedIsoAmount: transaction.refundedIsoAmount,
            refundedAtOnce: transaction.refundedAtOnce,
            updatedAt: now,
          },
        );
        await this.events.record(manager, transaction, refundAtOnce ? REFUNDED_AT_ONCE : undefined);
        if (refundAtOnce) await this.refund(manager, transaction, now);
        return transaction;
      })
      .catch(async (error: unknown) => {
        // Not settled by this request (it lapsed, or another notification settled it): the lock it
        // took holds no money, unless a concurrent notification of the same payment took it and paid.
        if (takesLock && !refusal && !(await this.holdsMoney(transactionId))) {
          await this.orderLock.release(pending);
        }
        throw error;
      });
    this.events.flush();
    // An outcome without the order's money gives the order back at once, as a declined card does:
    // an earlier `pay` of this payment may have taken the order's lock and died before settling
    // (kill -9), or this one took it before finding the payment ended by us.
    if (!holdsOrderMoney(settled)) await this.orderLock.release(settled);
    else await this.openAttempts.voidOthers(settled);
    return presentTransaction(settled, null);
  }

  /**
   * Whether the payment settled with its order's money, read under its row lock, so after any
   * settlement in flight has committed. When that cannot be read, it is taken to hold money: the
   * order's lock then waits for the payment's own event instead of being freed over a charge.
   */
  private async holdsMoney(transactionId: string): Promise<boolean> {
    try {
      const current = await this.dataSource.transaction((manager) =>
        manager.getRepository(Transaction).findOne({
          where: { id: transactionId },
          lock: { mode: 'pessimistic_read' },
        }),
      );
      return current ? holdsOrderMoney(current) : false;
    } catch {
      return true;
    }
  }

  /** The automatic refund of money that reached an order already paid another way, or a payment we ended. */
  private async refund(manager: EntityManager, payment: Transaction, now: Date): Promise<void> {
    const refund = manager.create(Transaction, {
      ...payment,
      id: randomUUID(),
      operationType: 'Refund',
      sourceTransactionId: payment.id,
      capturedIsoAmount: 0,
      refundedIsoAmount: 0,
      releasedIsoAmount: 0,
      refusedByOrder: false,
      refundedAtOnce: false,
      fingerprint: randomUUID(),
      asyncDetails: null,
      acquirerPendingSince: null,
      // No merchant request made it: a refund retried with the payment's key must not find it.
      idempotencyKey: null,
      createdAt: now,
      updatedAt: now,
    });
    applyOutcome(refund, 'Success', 'BYRD200');
    await manager.insert(Transaction, refund as QueryDeepPartialEntity<Transaction>);
    await this.events.record(manager, refund, REFUNDED_AT_ONCE);
  }
}

/** A pending payment takes any outcome; one we ended ourselves still takes its money (`endedByUs`). */
function assertSettles(transaction: Transaction, simulation: AsyncPaymentSimulation): void {
  if (!isAsyncPaymentType(transaction.paymentMethod)) {
    throw Refusal.notAllowed(
      `Transaction ${transaction.id} is a ${transaction.paymentMethod} payment; only multibanco and mbway payments wait for the shopper`,
    );
  }
  // A refund copies its payment's method (and is Processing while at the acquirer): only the
  // acquirer's answer settles it, as it settles anything else in flight there.
  if (transaction.operationType !== 'Payment' || transaction.acquirerPendingSince) {
    throw Refusal.notAllowed(
      `Transaction ${transaction.id} is a ${transaction.operationType.toLowerCase()} settled by the acquirer; only a multibanco or mbway payment waits for the shopper`,
    );
  }
  if (transaction.status !== 'Processing' && !(simulation === 'pay' && endedByUs(transaction))) {
    throw Refusal.notAllowed(`Transaction ${transaction.id} is ${transaction.status}, no longer pending`);
  }
}
