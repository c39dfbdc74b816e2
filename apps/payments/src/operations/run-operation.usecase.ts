import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { isGuid, toDecimalAmount, toIsoAmount, type OperationAmountRequest } from '@byrd/contracts';
import { ApiError, type MerchantContext } from '@byrd/platform';
import { ACQUIRER, acquirerResult, type Acquirer, type AcquirerResult } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { OrderLock } from '../payments-core/order-lock.js';
import { markInFlight, withTimeout } from '../payments/payment-authorizer.js';
import { applyOutcome } from '../transactions/outcome.js';
import { ofMerchant, Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';
import {
  checkOperation,
  heldOf,
  refundableOf,
  type ChargedBack,
  type FollowUpOperation,
} from './operation-rules.js';

/**
 * Capture, refund and release, write-ahead, and never an outside call under a lock:
 * 1. one DB transaction locks the money's root transaction (payment or pre-auth) first, then the
 *    source, checks the balances, inserts the operation in flight and reserves its amount on them,
 *    so concurrent operations on one payment serialise and balances never go negative;
 * 2. the acquirer is asked with no lock held, under the operation's own transaction id;
 * 3. a second DB transaction records the answer with its event, and gives the reserved amount back
 *    if the operation failed. A crash before 3 leaves the row in flight for RecoverAcquirerCalls.
 */
@Injectable()
export class RunOperation {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
    private readonly orderLock: OrderLock,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute(
    merchant: MerchantContext,
    operation: FollowUpOperation,
    sourceId: string,
    request: OperationAmountRequest,
    requestId: string,
  ) {
    const { transaction, reserved } = await this.dataSource.transaction(async (manager) => {
      const { source, root } = await this.lockSource(manager, merchant.merchantId, sourceId);
      const amount = checkOperation(
        operation,
        source,
        root,
        this.requestedAmount(request, source.currency),
        operation === 'Refund' ? await this.chargedBack(manager, source, root) : undefined,
      );
      const now = new Date();
      const transaction = manager.create(Transaction, {
        ...source,
        id: randomUUID(),
        operationType: operation,
        sourceTransactionId: source.id,
        isoAmount: amount,
        capturedIsoAmount: 0,
        refundedIsoAmount: 0,
        releasedIsoAmount: 0,
        isPreAuth: false,
        requestId,
        fingerprint: randomUUID(),
        asyncDetails: null,
        saveCardReference: null,
        savedTokenId: null,
        initiatedFrom: 'Server',
        createdAt: now,
        updatedAt: now,
      });
      markInFlight(transaction, now);
      await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
      await this.moveBalances(manager, operation, source, root, amount);
      return { transaction, reserved: source };
    });

    const result = await withTimeout(
      this.acquirer.followUp({
        reference: transaction.id,
        sourceReference: transaction.sourceTransactionId!,
        merchantMode: transaction.merchantMode,
        operation,
        isoAmount: transaction.isoAmount,
        currency: transaction.currency,
      }),
      this.config.ACQUIRER_TIMEOUT_MS,
    ).catch(() => acquirerResult('TemporaryFailed'));
    const source = await this.finish(transaction, result);
    // The balances as this operation left them (later ones on the same payment may be in flight).
    const holdsAmount = transaction.status === 'Success' || transaction.status === 'TemporaryFailed';
    return presentOperation(operation, transaction, holdsAmount ? reserved : source);
  }

  /**
   * Records the acquirer's answer to an operation in flight, with its event; a failed one gives its
   * reserved amount back. Only while the row still waits for an answer (the live request and the
   * recovery may both try): otherwise `transaction` is reloaded as recorded. Returns the source.
   */
  async finish(transaction: Transaction, result: AcquirerResult): Promise<Transaction> {
    const operation = transaction.operationType as FollowUpOperation;
    const { source, released } = await this.dataSource.transaction(async (manager) => {
      const { source, root } = await this.lockSource(
        manager,
        transaction.merchantId,
        transaction.sourceTransactionId!,
      );
      const current = await manager.findOneOrFail(Transaction, {
        where: { id: transaction.id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!current.acquirerPendingSince) {
        Object.assign(transaction, current);
        return { source, released: false };
      }
      applyOutcome(transaction, result.outcome, result.code);
      transaction.updatedAt = new Date();
      transaction.acquirerPendingSince =
        result.outcome === 'TemporaryFailed' ? current.acquirerPendingSince : null;
      const { status, code, description, updatedAt, acquirerPendingSince } = transaction;
      await manager.update(
        Transaction,
        { id: transaction.id },
        { status, code, description, updatedAt, acquirerPendingSince },
      );
      if (status !== 'Success' && status !== 'TemporaryFailed') {
        await this.moveBalances(manager, operation, source, root, -transaction.isoAmount);
      }
      await this.events.record(manager, transaction);
      return { source, released: operation === 'Release' && status === 'Success' && heldOf(source) === 0 };
    });
    this.events.flush();
    // A fully released pre-authorisation holds no money: its order is payable again.
    if (released) await this.orderLock.release(source);
    return source;
  }

  private async lockSource(manager: EntityManager, merchantId: string, sourceId: string) {
    const found = isGuid(sourceId)
      ? await manager.findOneBy(Transaction, ofMerchant(merchantId, { id: sourceId }))
      : null;
    if (!found) throw ApiError.notFound(`Transaction ${sourceId}`);
    const lock = { mode: 'pessimistic_write' as const };
    const rootId =
      found.operationType === 'Capture' && found.sourceTransactionId ? found.sourceTransactionId : found.id;
    const root = await manager.findOneOrFail(Transaction, { where: { id: rootId }, lock });
    const source =
      rootId === found.id
        ? root
        : await manager.findOneOrFail(Transaction, { where: { id: found.id }, lock });
    return { source, root };
  }

  /** Chargebacks open or lost on the money a refund would return (see ChargedBack). */
  private async chargedBack(
    manager: EntityManager,
    source: Transaction,
    root: Transaction,
  ): Promise<ChargedBack> {
    const onMoneyOf = async (transaction: Transaction): Promise<number> => {
      const [row] = await manager.query<{ iso_amount: string }[]>(
        `SELECT coalesce(sum(c.iso_amount), 0) AS iso_amount FROM chargebacks c
         WHERE c.merchant_id = $1
           AND (c.status IN ('Created', 'Disputing', 'PendingAction') OR c.resolution = 'Lost')
           AND (c.transaction_id = $2 OR c.transaction_id IN (
             SELECT id FROM transactions
             WHERE source_transaction_id = $2 AND operation_type = 'Capture' AND merchant_id = $1))`,
        [transaction.merchantId, transaction.id],
      );
      return Number(row.iso_amount);
    };
    const onSource = await onMoneyOf(source);
    return { source: onSource, root: root === source ? onSource : await onMoneyOf(root) };
  }

  private requestedAmount(request: OperationAmountRequest, currency: string): number | undefined {
    let amount: number | undefined = request.isoAmount;
    if (amount === undefined && request.amount !== undefined) {
      try {
        amount = toIsoAmount(request.amount, currency);
      } catch (error) {
        throw ApiError.invalidField('amount', (error as Error).message);
      }
    }
    if (amount !== undefined && amount <= 0)
      throw ApiError.invalidField('isoAmount', 'must be greater than zero');
    return amount;
  }

  /**
   * Moves the source's (and for a refund of a capture, its pre-auth's) balance by `amount`: reserved
   * when the operation is written ahead, given back (negative) when it fails.
   */
  private async moveBalances(
    manager: EntityManager,
    operation: FollowUpOperation,
    source: Transaction,
    root: Transaction,
    amount: number,
  ) {
    if (operation === 'Capture') source.capturedIsoAmount += amount;
    if (operation === 'Release') source.releasedIsoAmount += amount;
    if (operation === 'Refund') {
      source.refundedIsoAmount += amount;
      // A capture's refunds also count on its pre-auth, so the same money is never refunded twice.
      if (root !== source) root.refundedIsoAmount += amount;
    }
    await manager.save(source);
    if (root !== source) await manager.save(root);
  }
}

/** The answers of API-FACTS.md "Payments and operations". */
function presentOperation(operation: FollowUpOperation, transaction: Transaction, source: Transaction) {
  const money = (iso: number) => toDecimalAmount(iso, source.currency);
  const base = {
    code: transaction.code,
    description: transaction.description,
    status: transaction.status,
    transactionId: transaction.id,
    amount: money(transaction.isoAmount),
    isoAmount: transaction.isoAmount,
    currency: transaction.currency,
  };
  const original = { transactionId: source.id, amount: money(source.isoAmount), isoAmount: source.isoAmount };
  switch (operation) {
    case 'Capture':
      return {
        ...base,
        sourceTransaction: {
          ...original,
          capturedAmount: money(source.capturedIsoAmount),
          isoCapturedAmount: source.capturedIsoAmount,
          remainingAmount: money(heldOf(source)),
          isoRemainingAmount: heldOf(source),
        },
      };
    case 'Release':
      return {
        ...base,
        sourceTransaction: {
          ...original,
          releasedAmount: money(source.releasedIsoAmount),
          isoReleasedAmount: source.releasedIsoAmount,
          remainingAmount: money(heldOf(source)),
          isoRemainingAmount: heldOf(source),
        },
      };
    case 'Refund':
      return {
        ...base,
        sourceTransaction: {
          ...original,
          refundedAmount: money(source.refundedIsoAmount),
          isoRefundedAmount: source.refundedIsoAmount,
          remainingAmount: money(refundableOf(source)),
          isoRemainingAmount: refundableOf(source),
        },
      };
  }
}
