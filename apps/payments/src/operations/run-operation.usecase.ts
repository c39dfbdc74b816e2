import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  toDecimalAmount,
  type CaptureResponse,
  type OperationAmountRequest,
  type OperationResponseBase,
  type RefundResponse,
  type ReleaseResponse,
} from '@byrd/contracts';
import { ApiError, reconciledIsoAmount, Refusal, type MerchantContext } from '@byrd/platform';
import { ACQUIRER, acquirerResult, type Acquirer, type AcquirerResult } from '../acquirer/acquirer.js';
import { ChargebackRepository } from '../chargebacks/chargeback.repository.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { NO_MONEY_HELD, OrderLock } from '../payments-core/order-lock.js';
import { markInFlight } from '../payments/payment-authorizer.js';
import { withTimeout } from '../payments-core/timeout.js';
import { applyOutcome } from '../transactions/outcome.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { TransactionRepository, type LockedMoney } from '../transactions/transaction.repository.js';
import { heldOf } from '../transactions/balances.js';
import {
  checkOperation,
  refundableNow,
  type FollowUpOperation,
  type Unavailable,
} from './operation-rules.js';

const NOT_CHARGED_BACK = { source: 0, root: 0 };

/**
 * Capture, refund and release, write-ahead, and never an outside call under a lock:
 * 1. one DB transaction locks the money's root transaction (payment or pre-auth) first, then the
 *    source, checks the balances, inserts the operation in flight and reserves its amount on them,
 *    so concurrent operations on one payment serialise and balances never go negative;
 * 2. the acquirer is asked with no lock held, under the operation's own transaction id;
 * 3. a second DB transaction records the answer with its event, and gives the reserved amount back
 *    if the operation failed. A crash before 3 leaves the row in flight for RecoverAcquirerCalls.
 * A retry with the `idempotency-key` of a request that got as far as 1 is answered with its operation
 * (found in step 1, under the same locks) instead of running another.
 */
@Injectable()
export class RunOperation {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRepository,
    private readonly chargebacks: ChargebackRepository,
    private readonly events: TransactionEventRecorder,
    private readonly orderLock: OrderLock,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute<O extends FollowUpOperation>(
    merchant: MerchantContext,
    operation: O,
    sourceId: string,
    request: OperationAmountRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<OperationResponses[O]> {
    const started = await this.dataSource.transaction(async (manager) => {
      const money = await this.lockMoney(manager, merchant.merchantId, sourceId);
      const { source, root } = money;
      const requested = this.requestedAmount(request, source.currency);
      const unavailable = await this.unavailable(manager, operation, money);
      const earlier = await this.earlierOperation(manager, operation, source, requested, idempotencyKey);
      if (earlier) return { earlier, source, refundable: refundableNow(source, root, unavailable) };
      const amount = checkOperation(operation, source, root, requested, unavailable);
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
        refusedByOrder: false,
        refundedAtOnce: false,
        isPreAuth: false,
        requestId,
        fingerprint: randomUUID(),
        asyncDetails: null,
        saveCardReference: null,
        savedTokenId: null,
        initiatedFrom: 'Server',
        // This request's own key (not the source's): a retry of it finds this operation.
        idempotencyKey: idempotencyKey ?? null,
        payIdempotencyKey: null,
        createdAt: now,
        updatedAt: now,
      });
      markInFlight(transaction, now);
      await this.transactions.insert(manager, transaction);
      await this.moveBalances(manager, operation, money, amount);
      // What is left to refund once this refund holds its amount (others may be in flight too).
      return {
        earlier: null,
        transaction,
        reserved: source,
        refundable: refundableNow(source, root, unavailable),
      };
    });
    if (started.earlier)
      return presentOperation(operation, started.earlier, started.source, started.refundable);
    const { transaction, reserved, refundable } = started;

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
    // Its amount stays reserved unless it failed: also while still Processing (the recovery took the
    // call over before this request's answer was recorded, and settles it later).
    const holdsAmount = ['Success', 'TemporaryFailed', 'Processing'].includes(transaction.status);
    return presentOperation(
      operation,
      transaction,
      holdsAmount ? reserved : source,
      holdsAmount ? refundable : refundable + transaction.isoAmount,
    );
  }

  /**
   * Records the acquirer's answer to an operation in flight, with its event; a failed one gives its
   * reserved amount back. Only while the row still waits for an answer under the claim `transaction`
   * was read with (the live request and the recovery may both try): otherwise `transaction` is
   * reloaded as recorded. Returns the source.
   */
  async finish(transaction: Transaction, result: AcquirerResult): Promise<Transaction> {
    const operation = transaction.operationType as FollowUpOperation;
    const { source, released } = await this.dataSource.transaction(async (manager) => {
      const money = await this.lockMoney(manager, transaction.merchantId, transaction.sourceTransactionId!);
      const { source } = money;
      const current = await this.transactions.lock(manager, transaction.id);
      // Recorded only under the claim its caller read: once the recovery has claimed the call (and
      // may be voiding it at the acquirer), the live request's answer is not recorded.
      if (
        !current.acquirerPendingSince ||
        current.acquirerPendingSince.getTime() !== transaction.acquirerPendingSince?.getTime()
      ) {
        Object.assign(transaction, current);
        return { source, released: false };
      }
      applyOutcome(transaction, result.outcome, result.code);
      transaction.updatedAt = new Date();
      transaction.acquirerPendingSince =
        result.outcome === 'TemporaryFailed' ? current.acquirerPendingSince : null;
      await this.transactions.saveOutcome(manager, transaction);
      const { status } = transaction;
      if (status !== 'Success' && status !== 'TemporaryFailed') {
        await this.moveBalances(manager, operation, money, -transaction.isoAmount);
      }
      // Only a release that leaves the pre-auth holding nothing is announced as its cancellation.
      const released =
        operation === 'Release' && status === 'Success' && (await this.fullyReleased(manager, source));
      await this.events.record(manager, transaction, undefined, { fullyReleased: released });
      return { source, released };
    });
    this.events.flush();
    // A fully released pre-authorisation holds no money: its order is payable again.
    if (released) await this.orderLock.release(source);
    return source;
  }

  /**
   * The operation an earlier request with this idempotency-key created and committed on this source.
   * That request died or failed before answering (else the key would replay its answer): its amount
   * may be at the acquirer, settled by the recovery or moved already, so the retry answers it as it
   * stands instead of moving the money again (a second capture or refund of it would be refused, or
   * worse, allowed). One that moved nothing (declined, failed) is tried again; the same key with
   * another amount is refused, as the key's stored answer would be.
   */
  private async earlierOperation(
    manager: EntityManager,
    operation: FollowUpOperation,
    source: Transaction,
    requested: number | undefined,
    idempotencyKey: string | undefined,
  ): Promise<Transaction | null> {
    if (!idempotencyKey) return null;
    const earlier = await this.transactions.operationOfKey(
      manager,
      { merchantId: source.merchantId, idempotencyKey, sourceId: source.id, operationType: operation },
      NO_MONEY_HELD,
    );
    if (!earlier) return null;
    if (requested !== undefined && requested !== earlier.isoAmount) {
      throw Refusal.idempotencyKeyReused(
        `This idempotency-key was already used for a ${operation.toLowerCase()} of ${earlier.isoAmount} minor units of ${source.id}`,
      );
    }
    return earlier;
  }

  /**
   * Whether a pre-authorisation gave all of its amount back: released to the last cent, and settled.
   * What a capture or another release still in flight reserved counts as neither: the capture may
   * take it, the release may be declined and hand it back.
   */
  private async fullyReleased(manager: EntityManager, preAuth: Transaction): Promise<boolean> {
    return (
      preAuth.capturedIsoAmount === 0 &&
      preAuth.releasedIsoAmount === preAuth.isoAmount &&
      (await this.transactions.inFlightOf(manager, preAuth.id, 'Release')) === 0
    );
  }

  private async lockMoney(manager: EntityManager, merchantId: string, sourceId: string) {
    const money = await this.transactions.lockMoneyOf(manager, merchantId, sourceId);
    if (!money) throw ApiError.notFound(`Transaction ${sourceId}`);
    return money;
  }

  /**
   * What of the money an operation would move is still at stake elsewhere (see Unavailable): for a
   * refund, chargebacks and the root's captures in flight; for a capture or release of a
   * pre-authorisation, its captures and releases in flight.
   */
  private async unavailable(
    manager: EntityManager,
    operation: FollowUpOperation,
    { source, root }: LockedMoney,
  ): Promise<Unavailable> {
    if (operation !== 'Refund') {
      if (source.operationType !== 'PreAuth') return { chargedBack: NOT_CHARGED_BACK, capturesInFlight: 0 };
      return {
        chargedBack: NOT_CHARGED_BACK,
        capturesInFlight: await this.transactions.inFlightOf(manager, source.id, 'Capture'),
        releasesInFlight: await this.transactions.inFlightOf(manager, source.id, 'Release'),
      };
    }
    const onSource = await this.chargebacks.openOrLostOn(manager, source.merchantId, source.id);
    const onRoot =
      root === source ? onSource : await this.chargebacks.openOrLostOn(manager, root.merchantId, root.id);
    const capturesInFlight =
      root.operationType === 'PreAuth' ? await this.transactions.inFlightOf(manager, root.id, 'Capture') : 0;
    return { chargedBack: { source: onSource, root: onRoot }, capturesInFlight };
  }

  /** The amount asked for (undefined: the whole remaining amount); `amount` and `isoAmount` must agree. */
  private requestedAmount(request: OperationAmountRequest, currency: string): number | undefined {
    if (request.amount == null && request.isoAmount == null) return undefined;
    const isoAmount = reconciledIsoAmount(request, currency);
    if (isoAmount <= 0) throw ApiError.invalidField('isoAmount', 'must be greater than zero');
    return isoAmount;
  }

  /**
   * Moves the source's (and for a refund of a capture, its pre-auth's) balance by `amount`: reserved
   * when the operation is written ahead, given back (negative) when it fails.
   */
  private async moveBalances(
    manager: EntityManager,
    operation: FollowUpOperation,
    money: LockedMoney,
    amount: number,
  ) {
    const { source, root } = money;
    if (operation === 'Capture') source.capturedIsoAmount += amount;
    if (operation === 'Release') source.releasedIsoAmount += amount;
    if (operation === 'Refund') {
      source.refundedIsoAmount += amount;
      // A capture's refunds also count on its pre-auth, so the same money is never refunded twice.
      if (root !== source) root.refundedIsoAmount += amount;
    }
    await this.transactions.saveBalances(manager, money);
  }
}

/** What each operation answers (API-FACTS.md "Payments and operations"). */
export interface OperationResponses {
  Capture: CaptureResponse;
  Refund: RefundResponse;
  Release: ReleaseResponse;
}

/** The answers of API-FACTS.md "Payments and operations". */
function presentOperation<O extends FollowUpOperation>(
  operation: O,
  transaction: Transaction,
  source: Transaction,
  refundable: number,
): OperationResponses[O];
/** `refundable`: what a refund's source has left to refund (`refundableNow`), for a refund's answer. */
function presentOperation(
  operation: FollowUpOperation,
  transaction: Transaction,
  source: Transaction,
  refundable: number,
): OperationResponses[FollowUpOperation] {
  const money = (iso: number) => toDecimalAmount(iso, source.currency);
  const base: OperationResponseBase = {
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
      } satisfies CaptureResponse;
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
      } satisfies ReleaseResponse;
    case 'Refund': {
      const remaining = Math.max(0, refundable);
      return {
        ...base,
        sourceTransaction: {
          ...original,
          refundedAmount: money(source.refundedIsoAmount),
          isoRefundedAmount: source.refundedIsoAmount,
          remainingAmount: money(remaining),
          isoRemainingAmount: remaining,
        },
      } satisfies RefundResponse;
    }
  }
}
