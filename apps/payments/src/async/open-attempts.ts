import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, In, IsNull, LessThan, Not } from 'typeorm';
import { ASYNC_PAYMENT_TYPES } from '@byrd/contracts';
import { applyOutcome } from '../transactions/outcome.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { withTimeout } from '../payments-core/timeout.js';
import { ASYNC_PAYMENT_PROVIDER, type AsyncPaymentProvider } from './async-payment-provider.js';

/**
 * An async payment still waiting for the shopper: one a void at the processor may still stop. Not a
 * refund of one: it copies the payment's method and expiry, and is Processing while the acquirer
 * has it, where only the acquirer's answer (or the recovery) ends it (as in SettleAsyncPayment).
 */
const OPEN_ASYNC = {
  operationType: 'Payment' as const,
  status: 'Processing' as const,
  paymentMethod: In([...ASYNC_PAYMENT_TYPES]),
  acquirerPendingSince: IsNull(),
};

/**
 * Once an order is paid or canceled, the Multibanco references and MB WAY requests it still has open
 * must not be payable: each is voided at the provider, and only once it confirmed is our record canceled
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
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  /** Voids the open async attempts of the order `paid` paid, other than `paid` itself. */
  async voidOthers(paid: Transaction): Promise<void> {
    if (!paid.orderId) return;
    // One not voided stays Processing, as the processor may still take it: its settlement finds the
    // order held by `paid` and is refunded at once.
    await this.voidOpen(paid.merchantId, paid.orderId, paid.id);
  }

  /**
   * The order was canceled: none of its open attempts may be paid any more. Throws when one could
   * not be voided, so the caller (the order.canceled consumer) tries again; a settlement that
   * arrives meanwhile finds the order canceled and is refunded at once.
   */
  async voidAllOf(merchantId: string, orderId: string): Promise<void> {
    const failed = await this.voidOpen(merchantId, orderId, null);
    if (failed > 0) throw new Error(`${failed} open async payments of order ${orderId} not voided yet`);
  }

  /**
   * Voids the open async attempts that lapsed before `before`, oldest first, at most `limit` (the
   * lapse sweep, EndLapsedAttempts); stops early when `stop` says so. Returns how many this call
   * canceled (another replica's sweep may cancel some of the same).
   */
  async voidLapsed(before: Date, limit: number, stop: () => boolean): Promise<number> {
    const lapsed = await this.dataSource.getRepository(Transaction).find({
      where: { ...OPEN_ASYNC, expiresAt: LessThan(before) },
      order: { expiresAt: 'ASC' },
      take: limit,
    });
    return (await this.voidEach(lapsed, stop)).canceled;
  }

  /** Voids the order's open async attempts (but `except`); returns how many could not be. */
  private async voidOpen(merchantId: string, orderId: string, except: string | null): Promise<number> {
    const open = await this.dataSource.getRepository(Transaction).findBy({
      merchantId,
      orderId,
      ...(except ? { id: Not(except) } : {}),
      ...OPEN_ASYNC,
    });
    return (await this.voidEach(open)).failed;
  }

  /** Voids each attempt in turn (until `stop`); one that could not be is logged and stays open. */
  private async voidEach(
    attempts: Transaction[],
    stop: () => boolean = () => false,
  ): Promise<{ canceled: number; failed: number }> {
    let canceled = 0;
    let failed = 0;
    for (const attempt of attempts) {
      if (stop()) break;
      try {
        if (await this.voidAttempt(attempt)) canceled++;
      } catch (error) {
        failed++;
        this.logger.warn(`Open ${attempt.paymentMethod} payment ${attempt.id} not voided: ${String(error)}`);
      }
    }
    return { canceled, failed };
  }

  /**
   * Voids one open attempt at the processor (bounded by ACQUIRER_TIMEOUT_MS: a processor that hangs
   * must not hold the caller), then cancels our record if still pending; returns whether this call
   * canceled it. Throws when the void failed.
   */
  async voidAttempt(attempt: Transaction): Promise<boolean> {
    await withTimeout(this.provider.cancel(attempt), this.config.ACQUIRER_TIMEOUT_MS);
    return this.cancel(attempt);
  }

  /**
   * Cancels our record if still pending: a settlement that won the race keeps its outcome (the
   * conditional update waits for its row lock, then finds it settled).
   */
  private async cancel(attempt: Transaction): Promise<boolean> {
    const canceled = await this.dataSource.transaction(async (manager) => {
      applyOutcome(attempt, 'Canceled', 'BYRD205');
      attempt.updatedAt = new Date();
      const { status, code, description, updatedAt } = attempt;
      const result = await manager.update(
        Transaction,
        { id: attempt.id, ...OPEN_ASYNC },
        { status, code, description, updatedAt },
      );
      if (!result.affected) return false;
      await this.events.record(manager, attempt);
      return true;
    });
    if (canceled) this.events.flush();
    return canceled;
  }
}
