import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IDEMPOTENCY_RETENTION_MS, PeriodicSweep } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';

/**
 * One batch of finished webhooks past their retention, locked: counted from creation, and from the
 * end too, so a webhook a resend delivered today (failed last week) keeps the history its merchant
 * is looking at for the period of a success. Only `succeeded`, `failed` and
 * `canceled` rows are candidates (webhooks_finished_idx), never a pending one nor one with a resend
 * queued; SKIP LOCKED keeps it out of any claim's way, and passes over a webhook a resend is being
 * asked for (ResendWebhooks holds it FOR KEY SHARE until its resend is committed).
 */
const PURGE_CANDIDATES_SQL = `
  SELECT w.id FROM webhooks w
  WHERE w.status = ANY ($1::text[]) AND w.created_at < now() - $2::bigint * interval '1 millisecond'
    AND coalesce(w.finished_at, w.created_at) < now() - $2::bigint * interval '1 millisecond'
    AND NOT EXISTS (SELECT 1 FROM webhook_resends r WHERE r.webhook_id = w.id)
  LIMIT $3
  FOR UPDATE SKIP LOCKED`;

/**
 * Deletes the locked candidates (attempts go with them, ON DELETE CASCADE), except one whose resend
 * was committed after the candidates' snapshot was taken: this statement's snapshot is newer than
 * the lock, and no resend can be asked for a locked webhook (it waits, then finds it gone: 202 with
 * the id in notFound, as for any missing webhook).
 */
const PURGE_SQL = `
  DELETE FROM webhooks w
  WHERE w.id = ANY ($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM webhook_resends r WHERE r.webhook_id = w.id)`;

/**
 * One batch of resend requests kept under an idempotency-key ($2 rows) past the key's retention ($1
 * ms): a retry of them would no longer be recognised (ResendWebhooks), so nothing reads them.
 */
const PURGE_RESEND_KEYS_SQL = `
  DELETE FROM webhook_resend_requests
  WHERE id = ANY (ARRAY(
    SELECT id FROM webhook_resend_requests
    WHERE created_at < now() - $1::bigint * interval '1 millisecond'
    LIMIT $2))`;

/**
 * SPEC.md "Limits": successful webhooks are kept one week from creation, failed ones a month (all
 * attempts, payloads sent and received). The sweep deletes in small batches, each its own short
 * transaction, so delivery never waits on it. A resend asked meanwhile is never lost nor failed: it
 * either finds its webhook, which is then kept while the resend is queued, or finds it gone. It also
 * deletes the resend requests kept under an idempotency-key once the key's 24 hours are over.
 */
@Injectable()
export class PurgeWebhooks extends PeriodicSweep {
  protected readonly sweepName = 'Retention sweep';

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.WEBHOOK_RETENTION_SWEEP_MS;
  }

  /** Deletes every expired finished webhook, batch by batch; returns how many went. */
  async execute(): Promise<number> {
    let total = 0;
    for (const [statuses, keepMs] of [
      [['succeeded'], this.config.WEBHOOK_RETENTION_SUCCEEDED_MS],
      [['failed', 'canceled'], this.config.WEBHOOK_RETENTION_FAILED_MS],
    ] as const) {
      for (;;) {
        if (this.stopping) return total;
        const [found, deleted] = await this.purgeBatch(statuses, keepMs);
        total += deleted;
        if (found < this.config.WEBHOOK_RETENTION_BATCH) break;
      }
    }
    if (total > 0) this.logger.log(`Retention removed ${total} webhooks`);
    await this.purgeResendKeys();
    return total;
  }

  /** Deletes the resend requests kept past their idempotency-key's retention, batch by batch. */
  private async purgeResendKeys(): Promise<void> {
    const batch = this.config.WEBHOOK_RETENTION_BATCH;
    while (!this.stopping) {
      // A DELETE answers [rows, how many it deleted].
      const [, deleted] = await this.dataSource.query<[unknown, number]>(PURGE_RESEND_KEYS_SQL, [
        IDEMPOTENCY_RETENTION_MS,
        batch,
      ]);
      if (deleted < batch) return;
    }
  }

  /**
   * One batch, in one short transaction: lock the candidates, then delete those that still have no
   * resend. Answers how many were candidates and how many went.
   */
  private purgeBatch(statuses: readonly string[], keepMs: number): Promise<[number, number]> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await manager.query<{ id: string }[]>(PURGE_CANDIDATES_SQL, [
        statuses,
        keepMs,
        this.config.WEBHOOK_RETENTION_BATCH,
      ]);
      if (rows.length === 0) return [0, 0];
      const [, deleted] = await manager.query<[unknown, number]>(PURGE_SQL, [rows.map((r) => r.id)]);
      return [rows.length, deleted];
    });
  }
}
