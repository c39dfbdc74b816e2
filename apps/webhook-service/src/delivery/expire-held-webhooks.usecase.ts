import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicSweep } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { SCHEDULE_SPAN_UNITS } from './retry-policy.js';

/**
 * One batch per open (or half-open) circuit: its webhooks that have been due for longer than the
 * whole retry schedule lasts, and that no worker holds, end failed. Read through
 * webhooks_endpoint_due_idx from the endpoint's oldest due row, so the cost is the batch.
 */
const EXPIRE_HELD_SQL = `
  WITH held AS (
    SELECT w.id FROM webhook_circuits c CROSS JOIN LATERAL (
      SELECT id FROM webhooks
      WHERE status = 'pending' AND settings_id = c.settings_id
        AND next_attempt_at < now() - $1::bigint * interval '1 millisecond'
        AND (lease_until IS NULL OR lease_until <= now())
      ORDER BY next_attempt_at LIMIT $2) w
    WHERE c.state <> 'closed'
  ),
  locked AS (
    SELECT id FROM webhooks
    WHERE id IN (SELECT id FROM held) AND status = 'pending' AND (lease_until IS NULL OR lease_until <= now())
    FOR UPDATE SKIP LOCKED
  )
  UPDATE webhooks w
  SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, lease_until = NULL,
    finished_at = clock_timestamp()
  FROM locked WHERE w.id = locked.id
  RETURNING w.settings_id`;

/**
 * An open circuit holds its endpoint's webhooks back without using up their attempts, so a receiver
 * that never comes back would keep them pending for ever. This sweep gives them the outcome the
 * retry schedule would have: a webhook held back for longer than the schedule lasts (1 275 retry
 * units, about 21 hours) fails, without another attempt. Runs with the retention sweep's interval.
 */
@Injectable()
export class ExpireHeldWebhooks extends PeriodicSweep {
  protected readonly sweepName = 'Held webhooks sweep';

  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: WebhookMetrics,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.WEBHOOK_RETENTION_SWEEP_MS;
  }

  /** Fails every webhook held back past its schedule, batch by batch; returns how many. */
  async execute(): Promise<number> {
    const spanMs = SCHEDULE_SPAN_UNITS * this.config.WEBHOOK_RETRY_UNIT_MS;
    const batch = this.config.WEBHOOK_RETENTION_BATCH;
    const bySetting = new Map<string, number>();
    let total = 0;
    for (;;) {
      if (this.stopping) break;
      const [rows] = await this.dataSource.query<[{ settings_id: string }[], number]>(EXPIRE_HELD_SQL, [
        spanMs,
        batch,
      ]);
      for (const row of rows) bySetting.set(row.settings_id, (bySetting.get(row.settings_id) ?? 0) + 1);
      total += rows.length;
      if (rows.length === 0) break;
    }
    for (const [settingsId, count] of bySetting)
      this.logger.warn(
        `Setting ${settingsId}: ${count} webhooks failed, held back by the endpoint's open circuit ` +
          `for longer than the whole retry schedule`,
      );
    if (total > 0) this.metrics.deliveries.inc({ outcome: 'failed' }, total);
    return total;
  }
}
