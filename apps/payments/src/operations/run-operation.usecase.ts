import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { isGuid, toDecimalAmount, toIsoAmount, type OperationAmountRequest } from '@byrd/contracts';
import { ApiError, type MerchantContext } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { applyOutcome } from '../payments/payment-authorizer.js';
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
 * Capture, refund and release. The money's root transaction (payment or pre-auth) is locked first,
 * then the source, so concurrent operations on one payment run one after another and balances
 * never go negative; the new transaction, the balances and its event commit together.
 */
@Injectable()
export class RunOperation {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
  ) {}

  async execute(
    merchant: MerchantContext,
    operation: FollowUpOperation,
    sourceId: string,
    request: OperationAmountRequest,
    requestId: string,
  ) {
    const answer = await this.dataSource.transaction(async (manager) => {
      const { source, root } = await this.lockSource(manager, merchant.merchantId, sourceId);
      const amount = checkOperation(
        operation,
        source,
        root,
        this.requestedAmount(request, source.currency),
        operation === 'Refund' ? await this.chargedBack(manager, source, root) : undefined,
      );
      const result = await this.acquirer.followUp({
        transactionId: randomUUID(),
        merchantMode: source.merchantMode,
        operation,
        sourceTransactionId: source.id,
        isoAmount: amount,
        currency: source.currency,
      });

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
        initiatedFrom: 'Server',
        createdAt: now,
        updatedAt: now,
      });
      applyOutcome(transaction, result.outcome, result.code);
      await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
      if (transaction.status === 'Success')
        await this.applyBalances(manager, operation, source, root, amount);
      await this.events.record(manager, transaction);
      return presentOperation(operation, transaction, source);
    });
    this.events.flush();
    return answer;
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

  private async applyBalances(
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
