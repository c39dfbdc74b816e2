import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { columnsOf, GroupCommit, queryReplanned, traceparentOf } from '@byrd/platform';
import type { AcquirerResult } from '../acquirer/acquirer.js';
import { applyOutcome } from './outcome.js';
import { Transaction } from './transaction.entity.js';
import { TransactionEventRecorder } from './transaction-event-recorder.js';
import { underClaim } from './transaction.repository.js';

/**
 * Records acquirers' answers to written-ahead payments and their events in ONE statement, each only
 * while its row still waits for it under the same claim: `acquirer_pending_since` as its caller read
 * it (the write-ahead's, or the recovery's claim, which moves it). Of a live request and the
 * recovery settling the same row, the first to record wins and the other reads what it recorded;
 * once the recovery has claimed the row, the live request's answer is no longer recorded (the
 * recovery may be voiding that very call at the acquirer). An unknown outcome (TemporaryFailed) is
 * recorded and announced but keeps the row waiting, so the recovery settles it later. Answers that
 * arrive together are recorded together (group commit); answers for the same transaction never share
 * a statement (`keyOf`): the later one is written after the earlier, on what it left. Planned for each batch
 * (`queryReplanned`): a generic plan made while the table was small scans all of it ever after.
 */
const RECORD = `
  WITH input AS (
    SELECT *
      FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
                  $7::uuid[], $8::text[], $9::jsonb[], $10::text[], $11::timestamptz[]) WITH ORDINALITY
        AS i(id, status, code, description, updated_at, pending_since, event_id, subject, payload,
             traceparent, claimed_since, arrival)),
  done AS (
    UPDATE transactions t
       SET status = i.status, code = i.code, description = i.description, updated_at = i.updated_at,
           acquirer_pending_since = i.pending_since
      FROM input i
     WHERE t.id = ANY ($1::uuid[]) AND t.id = i.id
       AND ${underClaim('i.claimed_since', 't.acquirer_pending_since')}
    RETURNING i.event_id)
  INSERT INTO outbox (id, subject, payload, traceparent)
  SELECT i.event_id, i.subject, i.payload, i.traceparent FROM input i JOIN done USING (event_id)
   ORDER BY i.arrival
  RETURNING id`;

/** One outcome to record: the statement's parameters, a column each. */
type OutcomeRow = [
  id: string,
  status: string,
  code: string,
  description: string,
  updatedAt: Date,
  pendingSince: Date | null,
  eventId: string,
  subject: string,
  payload: string,
  traceparent: string | null,
  claimedSince: Date | null,
];

/** Outcomes recorded together at most, batches written at once, and one outcome per transaction a batch. */
const BATCH = { maxBatch: 64, maxInFlight: 2, keyOf: ([id]: OutcomeRow) => id };

@Injectable()
export class AcquirerOutcomeRecorder {
  private readonly batches: GroupCommit<OutcomeRow, boolean>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: TransactionEventRecorder,
  ) {
    this.batches = new GroupCommit((rows) => this.recordBatch(rows), BATCH);
  }

  /** Returns false (and reloads the transaction) when someone else recorded an outcome first. */
  async record(transaction: Transaction, result: AcquirerResult): Promise<boolean> {
    const claimedSince = transaction.acquirerPendingSince;
    applyOutcome(transaction, result.outcome, result.code);
    transaction.updatedAt = new Date();
    if (result.outcome !== 'TemporaryFailed') transaction.acquirerPendingSince = null;
    const event = this.events.envelopeOf(transaction);
    const recorded = await this.batches.submit([
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
      claimedSince,
    ]);
    if (recorded) {
      this.events.flush();
      return true;
    }
    Object.assign(
      transaction,
      await this.dataSource.getRepository(Transaction).findOneByOrFail({ id: transaction.id }),
    );
    return false;
  }

  private async recordBatch(rows: OutcomeRow[]): Promise<boolean[]> {
    const recorded = await queryReplanned<{ id: string }>(this.dataSource, RECORD, columnsOf(rows));
    const events = new Set(recorded.map(({ id }) => id));
    return rows.map((row) => events.has(row[6]));
  }
}
