import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, In, Not } from 'typeorm';
import { ASYNC_PAYMENT_TYPES } from '@byrd/contracts';
import { applyOutcome } from '../transactions/outcome.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { ASYNC_PAYMENT_PROVIDER, type AsyncPaymentProvider } from './async-payment-provider.js';

/**
 * Once an order is paid, the Multibanco references and MB WAY requests it still has open must not be
 * payable too: each is voided at the provider, and only once it confirmed is our record canceled
 * (with its transaction.payment.canceled event): a record we canceled would otherwise claim a
 * reference still payable is dead. A settlement that arrives anyway is refunded at once
 * (SettleAsyncPayment), so the order is never charged twice either way.
 */
@Injectable()
export class OpenAttempts {
  private readonly logger = new Logger(OpenAttempts.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
    @Inject(ASYNC_PAYMENT_PROVIDER) private readonly provider: AsyncPaymentProvider,
  ) {}

  /** Voids the open async attempts of the order `paid` paid, other than `paid` itself. */
  async voidOthers(paid: Transaction): Promise<void> {
    if (!paid.orderId) return;
    const open = await this.dataSource.getRepository(Transaction).findBy({
      merchantId: paid.merchantId,
      orderId: paid.orderId,
      id: Not(paid.id),
      status: 'Processing',
      paymentMethod: In([...ASYNC_PAYMENT_TYPES]),
    });
    for (const attempt of open) {
      try {
        await this.provider.cancel(attempt);
        await this.cancel(attempt);
      } catch (error) {
        // Left Processing, as the processor may still take it: its settlement finds the order held
        // by `paid` and is refunded at once.
        this.logger.warn(`Open ${attempt.paymentMethod} payment ${attempt.id} not voided: ${String(error)}`);
      }
    }
  }

  /**
   * Cancels our record if still pending: a settlement that won the race keeps its outcome (the
   * conditional update waits for its row lock, then finds it settled).
   */
  private async cancel(attempt: Transaction): Promise<void> {
    const canceled = await this.dataSource.transaction(async (manager) => {
      applyOutcome(attempt, 'Canceled', 'BYRD205');
      attempt.updatedAt = new Date();
      const { status, code, description, updatedAt } = attempt;
      const result = await manager.update(
        Transaction,
        { id: attempt.id, status: 'Processing' },
        { status, code, description, updatedAt },
      );
      if (!result.affected) return false;
      await this.events.record(manager, attempt);
      return true;
    });
    if (canceled) this.events.flush();
  }
}
