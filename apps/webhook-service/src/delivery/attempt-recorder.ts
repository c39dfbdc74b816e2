import { Injectable, Logger } from '@nestjs/common';
import {
  DeliveryQueue,
  type AttemptRecord,
  type DeliveryJob,
  type ScheduledOutcome,
} from './delivery-queue.js';
import { EndpointBreaker } from './endpoint-breaker.js';

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
 * batch fails, its records are written one by one, so one bad record cannot fail the others.
 * What the attempts said about their endpoints goes to the breaker before the slots are freed, so
 * the next claim already sees a circuit the batch opened.
 */
@Injectable()
export class AttemptRecorder {
  private readonly logger = new Logger(AttemptRecorder.name);
  private pending: PendingRecord[] = [];
  private writing = false;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly breaker: EndpointBreaker,
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
      while (this.pending.length > 0) await this.write(this.pending.splice(0, MAX_BATCH));
    } finally {
      this.writing = false;
    }
  }

  private async write(batch: PendingRecord[]): Promise<void> {
    const settled: (() => void)[] = [];
    if (batch.length > 1) {
      try {
        const moved = await this.queue.recordScheduledBatch(batch);
        for (const record of batch) settled.push(() => record.resolve(moved.has(record.job.webhookId)));
      } catch (error) {
        this.logger.warn(`Recording ${batch.length} attempts together failed (${String(error)}); one by one`);
      }
    }
    if (settled.length === 0)
      for (const record of batch) {
        try {
          const moved = await this.queue.recordScheduled(record.job, record.attempt, record.outcome);
          settled.push(() => record.resolve(moved));
        } catch (error) {
          settled.push(() => record.reject(error));
        }
      }
    await this.tellBreaker(batch);
    for (const settle of settled) settle();
  }

  /** Attempts that were sent (not those stopped by unreadable credentials) count for their endpoint. */
  private async tellBreaker(batch: PendingRecord[]): Promise<void> {
    const sent = batch.filter((record) => !record.job.secretsError);
    if (sent.length === 0) return;
    try {
      await this.breaker.record(
        sent.map(({ job, attempt }) => ({
          settingsId: job.settingsId,
          statusCode: attempt.statusCode,
          error: attempt.error,
        })),
      );
    } catch (error) {
      // A lost count only delays a circuit opening or closing; the attempts themselves are recorded.
      this.logger.warn(`Circuit breaker not updated for ${sent.length} attempts: ${String(error)}`);
    }
  }
}
