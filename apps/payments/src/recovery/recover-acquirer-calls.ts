import { Inject, Injectable } from '@nestjs/common';
import { PeriodicSweep, whileHoldingLock } from '@byrd/platform';
import { DataSource } from 'typeorm';
import { ACQUIRER, acquirerResult, type Acquirer, type AcquirerResult } from '../acquirer/acquirer.js';
import { CardSeal } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { RunOperation } from '../operations/run-operation.usecase.js';
import { PaymentAuthorizer, type PendingAuthorization } from '../payments/payment-authorizer.js';
import { NO_MONEY_HELD } from '../payments-core/order-lock.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { AcquirerOutcomeRecorder } from '../transactions/acquirer-outcome.recorder.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';

const BATCH_SIZE = 50;

/**
 * Settles acquirer calls cut off before their answer was recorded: the process died between the
 * write-ahead commit and the outcome's, the acquirer timed out, or answered "unknown"
 * (TemporaryFailed). For each, it asks the acquirer what it holds under the transaction id and
 * records that, with the usual events (and the order's lock given back when no money is held); a
 * request the acquirer never received is voided there first, so it can never arrive late and charge.
 *
 * Except a payment whose shopper authenticated (3DS) and whose card is still sealed on its session
 * (an answered challenge's, or one kept to save): the shopper cannot be asked to authenticate and
 * send the card again for a crash of ours, so it is authorised now, under the same reference
 * (the acquirer de-duplicates on it: a first request still on the wire gets the same answer, never a
 * second authorisation), through the usual order lock and idempotency-key checks.
 */
@Injectable()
export class RecoverAcquirerCalls extends PeriodicSweep {
  protected readonly sweepName = 'Acquirer recovery sweep';
  private readonly seal: CardSeal;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRepository,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
    private readonly outcomes: AcquirerOutcomeRecorder,
    private readonly authorizer: PaymentAuthorizer,
    private readonly operations: RunOperation,
  ) {
    super();
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
  }

  protected intervalMs(): number {
    return this.config.ACQUIRER_RECOVERY_SWEEP_MS;
  }

  /** One sweep; returns how many calls it settled. */
  async execute(): Promise<number> {
    const ids = await this.transactions.claimCallsInFlight(
      this.config.ACQUIRER_RECOVERY_AFTER_MS,
      BATCH_SIZE,
    );
    let settled = 0;
    for (const id of ids) {
      try {
        // One recovery per call at a time: another one stalled between its lookup and its void would
        // otherwise reverse at the acquirer a call this one just recorded Success (it skips it now; the
        // claim this sweep took makes the stalled one's own record fail, and a later sweep settles it).
        if (await whileHoldingLock(this.dataSource, `acquirer-recovery:${id}`, () => this.settle(id)))
          settled++;
      } catch (error) {
        // Left in flight: the next sweep after the delay tries again.
        this.logger.error(`Acquirer call of transaction ${id} not settled yet: ${String(error)}`);
      }
    }
    return settled;
  }

  private async settle(id: string): Promise<boolean> {
    const transaction = await this.transactions.byId(id);
    if (!transaction.acquirerPendingSince) return false;
    const held = await this.acquirer.lookup(transaction.id, transaction.merchantMode);
    const resumable = held ? null : await this.sealedAuthorization(transaction);
    if (resumable) {
      this.logger.warn(
        `Resuming ${transaction.operationType} ${id}: the acquirer never had it; its shopper authenticated (3DS)`,
      );
      try {
        await this.authorizer.authorize(transaction, resumable);
      } finally {
        // Ended holding no money (the order refused it, another payment of its key charges, or a
        // decline): the first request may still be on the wire (a paused replica), so the reference
        // is voided as for any call the recovery cannot finish. An order that could not be asked
        // leaves it in flight: asked again after the delay (until the sealed card is given up).
        if (NO_MONEY_HELD.includes(transaction.status))
          await this.acquirer.void(transaction.id, transaction.merchantMode);
      }
      return !transaction.acquirerPendingSince; // an unknown answer is asked about again later
    }
    const result = held ?? (await this.voided(transaction));
    if (result.outcome === 'TemporaryFailed') return false; // still unknown: ask again after the delay
    this.logger.warn(`Recovered ${transaction.operationType} ${id}: the acquirer holds ${result.outcome}`);
    switch (transaction.operationType) {
      case 'Payment':
      case 'PreAuth':
        if (!(await this.outcomes.record(transaction, result))) return false;
        await this.authorizer.closeAttempt(transaction);
        return true;
      case 'Capture':
      case 'Refund':
      case 'Release':
        await this.operations.finish(transaction, result);
        return true;
      case 'Verification':
        return false; // never sent to an acquirer
    }
  }

  /** A request the acquirer never received, voided there (refused if it arrives late): Error. */
  private async voided(transaction: Transaction): Promise<AcquirerResult> {
    await this.acquirer.void(transaction.id, transaction.merchantMode);
    return acquirerResult('Error');
  }

  /**
   * The authorisation a payment's answered 3DS challenge allowed, when its card is still sealed on
   * the session (kept until the outcome is recorded) and opens; null otherwise (voided as any other).
   */
  private async sealedAuthorization(transaction: Transaction): Promise<PendingAuthorization | null> {
    if (transaction.operationType !== 'Payment' && transaction.operationType !== 'PreAuth') return null;
    const session = await this.dataSource
      .getRepository(ThreeDSSession)
      .findOneBy({ transactionId: transaction.id });
    if (!session?.sealedCard) return null;
    if (session.status !== 'Authorized' && session.status !== 'NotEnrolled') return null;
    const card = this.seal.openOrNull(session.sealedCard, session.id);
    if (!card) return null;
    return {
      card,
      authentication: { eci: session.eci, aav: session.aav, dsTransactionId: session.dsTransactionId },
      sealedOnSession: true,
      resumedByRecovery: true,
    };
  }
}
