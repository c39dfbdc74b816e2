import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  createEnvelope,
  toDecimalAmount,
  transactionEventNameOf,
  type ReleaseFacts,
  type TransactionEventContent,
} from '@byrd/contracts';
import { Outbox, type RowToInsert } from '@byrd/platform';
import { publicOperationType, type Transaction } from './transaction.entity.js';

/** Writes transaction.* events to the outbox, in the transaction that changed the money. */
@Injectable()
export class TransactionEventRecorder {
  constructor(private readonly outbox: Outbox) {}

  /**
   * Card verifications (the vault's) are not announced: they move no money and no order. `extras`
   * go to internal consumers only (TransactionEventContent). A successful release is announced by
   * whether it left its pre-authorisation holding nothing (`release`; by default it did not).
   */
  async record(
    manager: EntityManager,
    transaction: Transaction,
    extras?: Pick<TransactionEventContent, 'refundedAtOnce'>,
    release?: ReleaseFacts,
  ): Promise<void> {
    if (transaction.operationType === 'Verification') return;
    const envelope = this.envelopeOf(transaction, release);
    if (extras) Object.assign(envelope.data, extras);
    await this.outbox.append(manager, envelope);
  }

  /** The outbox row announcing a transaction, for `insertAtomically` together with it. */
  outboxRow(transaction: Transaction): RowToInsert {
    return this.outbox.row(this.envelopeOf(transaction));
  }

  envelopeOf(transaction: Transaction, release?: ReleaseFacts) {
    const operationType = publicOperationType(transaction);
    return createEnvelope(transactionEventNameOf(operationType, transaction.status, release), {
      merchantId: transaction.merchantId,
      paymentMethod: transaction.paymentMethod,
      referenceIds: [transaction.orderId, transaction.id, transaction.sourceTransactionId].filter(
        (id): id is string => Boolean(id),
      ),
      data: {
        transactionId: transaction.id,
        orderId: transaction.orderId,
        orderRef: transaction.orderRef,
        status: transaction.status,
        operationType,
        amount: toDecimalAmount(transaction.isoAmount, transaction.currency),
        isoAmount: transaction.isoAmount,
        currency: transaction.currency,
        code: transaction.code,
        description: transaction.description,
        sourceTransactionId: transaction.sourceTransactionId,
        paymentMethod: transaction.paymentMethod,
        initiatedFrom: transaction.initiatedFrom,
      },
    });
  }

  /** Publishes what was just committed without waiting for the next relay poll. */
  flush(): void {
    this.outbox.wake();
  }
}
