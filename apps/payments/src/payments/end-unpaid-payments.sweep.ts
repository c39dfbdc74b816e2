import { Inject, Injectable } from '@nestjs/common';
import { DataSource, IsNull, LessThan } from 'typeorm';
import { PeriodicSweep } from '@byrd/platform';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { applyOutcome } from '../transactions/outcome.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';

const BATCH_SIZE = 100;

/** A two-step card payment still waiting for its card (`/pay`): what PayPayment accepts. */
const UNPAID = {
  status: 'Created' as const,
  paymentMethod: 'card' as const,
  maskedCardNumber: IsNull(),
};

/**
 * Cancels the two-step card payments nobody paid (`/pay`) before their `expiresAt`, with their
 * transaction.payment.canceled event, so the merchant sees them end and their order stops reading
 * `pending`. Rows a `/pay` holds are skipped (SKIP LOCKED): that request decides under the lock, and a
 * later sweep finds the row again if it is still unpaid. Replicas share the rows the same way.
 */
@Injectable()
export class EndUnpaidPayments extends PeriodicSweep {
  protected readonly sweepName = 'Unpaid two-step payments sweep';

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.UNPAID_PAYMENT_SWEEP_MS;
  }

  /** Cancels the lapsed ones, a batch per transaction, until none is left or shutdown; returns how many. */
  async execute(now = new Date()): Promise<number> {
    let ended = 0;
    for (let batch = BATCH_SIZE; batch === BATCH_SIZE && !this.stopping;) {
      batch = await this.dataSource.transaction(async (manager) => {
        const lapsed = await manager.find(Transaction, {
          where: { ...UNPAID, expiresAt: LessThan(now) },
          order: { expiresAt: 'ASC' },
          take: BATCH_SIZE,
          lock: { mode: 'pessimistic_write', onLocked: 'skip_locked' },
        });
        for (const payment of lapsed) {
          applyOutcome(payment, 'Canceled', 'BYRD205');
          payment.updatedAt = now;
          const { status, code, description, updatedAt } = payment;
          await manager.update(Transaction, { id: payment.id }, { status, code, description, updatedAt });
          await this.events.record(manager, payment);
        }
        return lapsed.length;
      });
      this.events.flush();
      ended += batch;
    }
    if (ended > 0) this.logger.log(`Canceled ${ended} two-step payments never paid before they expired`);
    return ended;
  }
}
