import { Inject, Injectable } from '@nestjs/common';
import { PeriodicSweep, whileHoldingLock } from '@byrd/platform';
import { DataSource } from 'typeorm';
import { ACQUIRER, acquirerResult, type Acquirer, type AcquirerResult } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { RunOperation } from '../operations/run-operation.usecase.js';
import { PaymentAuthorizer } from '../payments/payment-authorizer.js';
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
 */
@Injectable()
export class RecoverAcquirerCalls extends PeriodicSweep {
  protected readonly sweepName = 'Acquirer recovery sweep';

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
    const result = await this.outcomeOf(transaction);
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

  private async outcomeOf(transaction: Transaction): Promise<AcquirerResult> {
    const held = await this.acquirer.lookup(transaction.id, transaction.merchantMode);
    if (held) return held;
    await this.acquirer.void(transaction.id, transaction.merchantMode);
    return acquirerResult('Error');
  }
}
