import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { createEnvelope, toDecimalAmount } from '@byrd/contracts';
import { Outbox } from '@byrd/platform';
import type { Chargeback } from './chargeback.entity.js';
import { STATUS_EVENT } from './chargeback-status.js';

/** Writes chargeback.* events to the outbox, in the transaction that changed the chargeback. */
@Injectable()
export class ChargebackEventRecorder {
  constructor(private readonly outbox: Outbox) {}

  async record(manager: EntityManager, chargeback: Chargeback): Promise<void> {
    await this.outbox.append(
      manager,
      createEnvelope(STATUS_EVENT[chargeback.status], {
        merchantId: chargeback.merchantId,
        paymentMethod: chargeback.paymentMethod,
        // Same order as transaction events: the order first, then the transaction, then the chargeback.
        referenceIds: [chargeback.orderId, chargeback.transactionId, chargeback.id].filter(
          (id): id is string => Boolean(id),
        ),
        data: {
          chargebackId: chargeback.id,
          transactionId: chargeback.transactionId,
          orderId: chargeback.orderId,
          status: chargeback.status,
          amount: toDecimalAmount(chargeback.isoAmount, chargeback.currency),
          currency: chargeback.currency,
          reason: chargeback.reason,
        },
      }),
    );
  }

  /** Publishes what was just committed without waiting for the next relay poll. */
  flush(): void {
    this.outbox.wake();
  }
}
