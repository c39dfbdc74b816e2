import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  isGuid,
  reconcileAmounts,
  toDecimalAmount,
  type ChargebackResponse,
  type OpenChargebackRequest,
} from '@byrd/contracts';
import {
  ApiError,
  createdWithinKeyRetention,
  lockKeyInTransaction,
  reconciledIsoAmount,
  Refusal,
} from '@byrd/platform';
import { refundableOf } from '../transactions/balances.js';
import { ofMerchant, Transaction } from '../transactions/transaction.entity.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';
import { Chargeback } from './chargeback.entity.js';
import { ChargebackEventRecorder } from './chargeback-events.js';
import { ChargebackRepository } from './chargeback.repository.js';
import { presentChargeback } from './chargeback.presenter.js';

/** Only money that reached the merchant can be charged back: a settled payment, or a capture. */
const CHARGEABLE_OPERATIONS = ['Payment', 'Capture'];

/**
 * A scheme opens a chargeback on a settled payment or capture (in the sandbox, on request). The
 * disputed amount defaults to, and may not exceed, what was neither refunded nor already disputed.
 */
@Injectable()
export class OpenChargeback {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: ChargebackEventRecorder,
    private readonly chargebacks: ChargebackRepository,
    private readonly transactions: TransactionRepository,
  ) {}

  async execute(
    merchantId: string,
    request: OpenChargebackRequest,
    idempotencyKey?: string,
  ): Promise<ChargebackResponse> {
    const chargeback = await this.dataSource.transaction(async (manager) => {
      const earlier = await this.earlierOfKey(manager, merchantId, request, idempotencyKey);
      if (earlier) return earlier;
      // Locked so two chargebacks (or a refund) on one payment cannot both spend the same balance.
      // A capture's pre-authorisation is locked first, as refunds lock it (root, then source): a
      // refund of the pre-authorisation and a chargeback on one of its captures run one after the other.
      const found = isGuid(request.transactionId)
        ? await manager
            .getRepository(Transaction)
            .findOneBy(ofMerchant(merchantId, { id: request.transactionId }))
        : null;
      if (!found) throw ApiError.notFound(`Transaction ${request.transactionId}`);
      const preAuth =
        found.operationType === 'Capture' && found.sourceTransactionId
          ? await manager.getRepository(Transaction).findOne({
              where: { id: found.sourceTransactionId },
              lock: { mode: 'pessimistic_write' },
            })
          : null;
      const transaction = await manager.getRepository(Transaction).findOneOrFail({
        where: { id: found.id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!CHARGEABLE_OPERATIONS.includes(transaction.operationType) || transaction.status !== 'Success') {
        throw Refusal.notAllowed(
          `Transaction ${transaction.id} is a ${transaction.status} ${transaction.operationType}; only a successful payment or capture can be charged back`,
        );
      }
      const disputable = await this.disputableAmount(manager, transaction, preAuth);
      const isoAmount = this.amountOf(request, transaction, disputable);

      const now = new Date();
      const opened = manager.getRepository(Chargeback).create({
        id: randomUUID(),
        merchantId,
        transactionId: transaction.id,
        orderId: transaction.orderId,
        status: 'Created',
        resolution: null,
        paymentMethod: transaction.paymentMethod,
        isoAmount,
        currency: transaction.currency,
        reason: request.reason || null,
        idempotencyKey: idempotencyKey ?? null,
        moveIdempotencyKey: null,
        createdAt: now,
        updatedAt: now,
      });
      await manager.insert(Chargeback, opened);
      await this.events.record(manager, opened);
      return opened;
    });
    this.events.flush();
    return presentChargeback(chargeback);
  }

  /**
   * The chargeback an earlier request with this idempotency-key opened, within the key's retention:
   * that request died or failed before its answer was stored, so its retry answers the chargeback as
   * it stands instead of opening a second one. Read under the key's lock, so two requests of one key
   * at once (the first stalled past its lease) open one. Another transaction or amount is another
   * request: refused, as the key's stored answer would be.
   */
  private async earlierOfKey(
    manager: EntityManager,
    merchantId: string,
    request: OpenChargebackRequest,
    idempotencyKey: string | undefined,
  ): Promise<Chargeback | null> {
    if (!idempotencyKey) return null;
    await lockKeyInTransaction(manager, 'chargebacks', merchantId, idempotencyKey);
    const earlier = await manager.getRepository(Chargeback).findOne({
      where: { merchantId, idempotencyKey, createdAt: createdWithinKeyRetention() },
      order: { createdAt: 'DESC' },
    });
    if (!earlier) return null;
    const amount =
      request.amount == null && request.isoAmount == null
        ? null
        : reconcileAmounts(request, earlier.currency);
    const same =
      request.transactionId.toLowerCase() === earlier.transactionId &&
      (amount === null || (amount.ok && amount.isoAmount === earlier.isoAmount));
    if (!same) {
      throw Refusal.idempotencyKeyReused(
        `This idempotency-key already opened chargeback ${earlier.id}, on another transaction or amount`,
      );
    }
    return earlier;
  }

  /**
   * What is neither refunded nor already disputed. For a capture, its pre-authorisation's balance
   * bounds it too: a refund of the pre-authorisation is counted there, not on the capture, and
   * captures still in flight are not money taken yet.
   */
  private async disputableAmount(
    manager: EntityManager,
    transaction: Transaction,
    preAuth: Transaction | null,
  ): Promise<number> {
    const own =
      transaction.isoAmount -
      transaction.refundedIsoAmount -
      (await this.chargebacks.disputedOn(manager, transaction.merchantId, transaction.id));
    if (!preAuth) return own;
    const ofPreAuth =
      refundableOf(preAuth, await this.transactions.inFlightOf(manager, preAuth.id, 'Capture')) -
      (await this.chargebacks.disputedOnCapturesOf(manager, transaction.merchantId, preAuth.id));
    return Math.min(own, ofPreAuth);
  }

  private amountOf(request: OpenChargebackRequest, transaction: Transaction, disputable: number): number {
    const money = (isoAmount: number) =>
      `${toDecimalAmount(isoAmount, transaction.currency)} ${transaction.currency}`;
    if (disputable <= 0) {
      throw Refusal.notAllowed(
        `Nothing of transaction ${transaction.id} is left to charge back: it is refunded or already disputed`,
      );
    }
    if (request.amount == null && request.isoAmount == null) return disputable;
    const isoAmount = reconciledIsoAmount(request, transaction.currency);
    if (isoAmount <= 0) throw ApiError.invalidField('amount', 'must be greater than zero');
    if (isoAmount > disputable) {
      throw Refusal.notAllowed(
        `${money(isoAmount)} exceeds the ${money(disputable)} of transaction ${transaction.id} that can still be charged back`,
      );
    }
    return isoAmount;
  }
}
