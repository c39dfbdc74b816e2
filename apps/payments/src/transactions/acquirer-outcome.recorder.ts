import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { queryPrepared, traceparentOf } from '@byrd/platform';
import type { AcquirerResult } from '../acquirer/acquirer.js';
import { applyOutcome } from './outcome.js';
import { Transaction } from './transaction.entity.js';
import { TransactionEventRecorder } from './transaction-event-recorder.js';

/**
 * Records the acquirer's answer to a written-ahead payment and its event in ONE statement, and only
 * while the row still waits for it: of a live request and the recovery settling the same row, the
 * first to record wins and the other reads what it recorded. An unknown outcome (TemporaryFailed) is
 * recorded and announced but keeps the row waiting, so the recovery settles it later.
 */
const RECORD = `
  WITH done AS (
    UPDATE transactions
       SET status = $2, code = $3, description = $4, updated_at = $5, acquirer_pending_since = $6
     WHERE id = $1 AND acquirer_pending_since IS NOT NULL
    RETURNING id)
  INSERT INTO outbox (id, subject, payload, traceparent) SELECT $7, $8, $9, $10 FROM done
  RETURNING id`;

@Injectable()
export class AcquirerOutcomeRecorder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
  ) {}

  /** Returns false (and reloads the transaction) when someone else recorded an outcome first. */
  async record(transaction: Transaction, result: AcquirerResult): Promise<boolean> {
    applyOutcome(transaction, result.outcome, result.code);
    transaction.updatedAt = new Date();
    if (result.outcome !== 'TemporaryFailed') transaction.acquirerPendingSince = null;
    const event = this.events.envelopeOf(transaction);
    const recorded = await queryPrepared(this.dataSource, RECORD, [
      transaction.id,
      transaction.status,
      transaction.code,
      transaction.description,
      transaction.updatedAt,
      transaction.acquirerPendingSince,
      event.id,
      event.type,
      JSON.stringify(event),
      traceparentOf(),
    ]);
    if (recorded.length > 0) {
      this.events.flush();
      return true;
    }
    Object.assign(
      transaction,
      await this.dataSource.getRepository(Transaction).findOneByOrFail({ id: transaction.id }),
    );
    return false;
  }
}
