import { Inject, Injectable } from '@nestjs/common';
import { PeriodicSweep } from '@byrd/platform';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { OpenAttempts } from './open-attempts.js';

const BATCH_SIZE = 100;

/**
 * Ends the Multibanco and MB WAY payments still waiting for the shopper ASYNC_LAPSE_GRACE_MS after
 * they lapsed. Nothing else would: the processor's expiry notice was lost, or the process was killed
 * between a step at the processor and its record here (an MB WAY request saved but never pushed, a
 * void made but not recorded), and the merchant would see the payment pending for ever. Each is
 * voided at the processor, then canceled with its event (OpenAttempts.voidAttempt, a conditional
 * update, so replicas sweeping at once announce it once); a payment that arrives anyway is refunded
 * at once, as for any attempt we ended (SettleAsyncPayment).
 */
@Injectable()
export class EndLapsedAttempts extends PeriodicSweep {
  protected readonly sweepName = 'Lapsed async payments sweep';

  constructor(
    private readonly openAttempts: OpenAttempts,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.ASYNC_LAPSE_SWEEP_MS;
  }

  /** One sweep (oldest first, a batch); returns how many payments it ended. */
  async execute(): Promise<number> {
    const lapsedBefore = new Date(Date.now() - this.config.ASYNC_LAPSE_GRACE_MS);
    const ended = await this.openAttempts.voidLapsed(lapsedBefore, BATCH_SIZE, () => this.stopping);
    if (ended > 0) this.logger.warn(`Ended ${ended} async payments left waiting past their expiry`);
    return ended;
  }
}
