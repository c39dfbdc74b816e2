import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicSweep } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';

/**
 * One batch of finished webhooks past their retention (attempts go with them, ON DELETE CASCADE).
 * Only `succeeded`, `failed` and `canceled` rows are candidates (webhooks_finished_idx), never a
 * pending one nor one with a resend queued; SKIP LOCKED keeps it out of any claim's way.
 */
const PURGE_SQL = `
  DELETE FROM webhooks WHERE id IN (
    SELECT w.id FROM webhooks w
    WHERE w.status = ANY ($1::text[]) AND w.created_at < now() - $2::bigint * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM webhook_resends r WHERE r.webhook_id = w.id)
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  )`;

/**
 * SPEC.md "Limits": successful webhooks are kept one week from creation, failed ones a month (all
 * attempts, payloads sent and received). The sweep deletes in small batches, each its own short
 * statement, so delivery never waits on it.
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
        const [, deleted] = await this.dataSource.query<[unknown, number]>(PURGE_SQL, [
          statuses,
          keepMs,
          this.config.WEBHOOK_RETENTION_BATCH,
        ]);
        total += deleted;
        if (deleted < this.config.WEBHOOK_RETENTION_BATCH) break;
      }
    }
    if (total > 0) this.logger.log(`Retention removed ${total} webhooks`);
    return total;
  }
}
