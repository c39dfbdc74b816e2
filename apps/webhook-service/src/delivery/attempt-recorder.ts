import { Injectable, Logger } from '@nestjs/common';
import { distinctKeysAhead } from '@byrd/platform';
import {
  DeliveryRepository,
  type AttemptRecord,
  type DeliveryJob,
  type ScheduledOutcome,
} from './delivery.repository.js';
import { EndpointObservations } from './endpoint-observations.js';

interface PendingRecord {
  job: DeliveryJob;
  attempt: AttemptRecord;
  outcome: ScheduledOutcome;
  resolve: (moved: boolean) => void;
  reject: (error: unknown) => void;
}

const MAX_BATCH = 200;

/**
 * Writes finished scheduled attempts (each with its webhook's new state). One write runs at a time;
 * what finishes while it runs is written next, together: at low load every record is written at
 * once, under load one statement and one commit serve many deliveries. A record's promise settles
 * when its commit is done, so a delivery's slot is freed only once its outcome is durable. If a
 * batch fails, its records are written one by one, so one bad record cannot fail the others. The
 * endpoints of what was written are noted as tried (EndpointObservations).
 */
@Injectable()
export class AttemptRecorder {
  private readonly logger = new Logger(AttemptRecorder.name);
  private pending: PendingRecord[] = [];
  private writing = false;

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly observations: EndpointObservations,
  ) {}

  /** Resolves with whether the webhook was moved (false: its lease had been lost). */
  record(job: DeliveryJob, attempt: AttemptRecord, outcome: ScheduledOutcome): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ job, attempt, outcome, resolve, reject });
      if (!this.writing) void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0) await this.write(this.nextBatch());
    } finally {
      this.writing = false;
    }
  }

  /**
   * The records to write together next, in arrival order: at most MAX_BATCH, and one per webhook.
   * A batch statement moves each webhook once, by whichever of its records PostgreSQL joins first,
   * so a webhook's second record (a late success after its lease moved on, say) waits for the next
   * write and is judged on what the first left, as it would be alone.
   */
  private nextBatch(): PendingRecord[] {
    return this.pending.splice(0, distinctKeysAhead(this.pending, MAX_BATCH, (r) => r.job.webhookId).size);
  }

  private async write(batch: PendingRecord[]): Promise<void> {
    this.observations.tried((await this.writeRecords(batch)).map(triedAt));
  }

  /** Writes the batch, resolving each record; answers those written. */
  private async writeRecords(batch: PendingRecord[]): Promise<PendingRecord[]> {
    if (batch.length > 1) {
      try {
        const moved = await this.deliveries.recordScheduledBatch(batch);
        for (const record of batch) record.resolve(moved.has(record.job.webhookId));
        return batch;
      } catch (error) {
        this.logger.warn(`Recording ${batch.length} attempts together failed (${String(error)}); one by one`);
      }
    }
    const written: PendingRecord[] = [];
    for (const record of batch) {
      try {
        record.resolve(await this.deliveries.recordScheduled(record.job, record.attempt, record.outcome));
        written.push(record);
      } catch (error) {
        record.reject(error);
      }
    }
    return written;
  }
}

const triedAt = (record: PendingRecord) => ({
  settingsId: record.job.settingsId,
  at: record.attempt.startedAt,
});
