import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicSweep } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { CLAIMABLE, PENDING_ENDPOINTS_CTE } from '../delivery/delivery.repository.js';
import { observationGapMs } from '../delivery/endpoint-observations.js';
import { SCHEDULE_SPAN_MINUTES } from '../delivery/retry-policy.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';

/**
 * One batch per endpoint whose receiver has been failing for longer than the whole retry schedule
 * lasts ($1 ms), tried all that time and still being tried ($3 ms, the observation gap): its webhooks
 * due for that long that no worker holds, failed. An endpoint that answers, or that nobody is trying
 * now (delivery stopped: `tried_at` is old), or was not trying for part of that time (the streak
 * started again after the gap, EndpointObservations), keeps them all, as does a backlog still
 * draining at a receiver that answers. Each endpoint's oldest due rows are read through
 * webhooks_endpoint_due_idx, so the cost is the endpoints and the batch, not the rows stored; SKIP
 * LOCKED keeps it out of any claim's way.
 */
const EXPIRE_HELD_SQL = `
  WITH RECURSIVE ${PENDING_ENDPOINTS_CTE}
  UPDATE webhooks w
  SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, lease_until = NULL,
    finished_at = clock_timestamp()
  WHERE w.id = ANY (ARRAY(
    SELECT h.id FROM endpoints e
    JOIN webhook_settings s
      ON s.id = e.settings_id AND s.failing_since < now() - $1::bigint * interval '1 millisecond'
        AND s.tried_at > now() - $3::bigint * interval '1 millisecond'
    CROSS JOIN LATERAL (
      SELECT id FROM webhooks
      WHERE settings_id = e.settings_id AND ${CLAIMABLE}
        AND next_attempt_at < now() - $1::bigint * interval '1 millisecond'
      ORDER BY next_attempt_at LIMIT $2
      FOR UPDATE SKIP LOCKED) h
    WHERE e.settings_id IS NOT NULL))
  RETURNING w.settings_id`;

/**
 * An endpoint's open circuit holds its webhooks back without using up their attempts (a probe goes
 * at most every 20 cool-downs), so a receiver that never comes back would keep them pending for
 * ever. This sweep gives them the outcome their schedule would have had: a webhook that has waited
 * for its next attempt longer than the whole schedule lasts (1 275 retry minutes, about 21 hours),
 * while its endpoint was tried and every attempt there failed (`failing_since`, written with the
 * attempts, and `tried_at`), fails without another attempt. A webhook following its schedule, even
 * one stretched by a receiver's Retry-After, is never due that long; one that waited because no
 * worker ran (delivery stopped or scaled to zero, now or for a while since it became due), or behind
 * a long backlog at a receiver that answers, is kept, to be delivered.
 * Runs at the retention sweep's interval.
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
    const spanMs = SCHEDULE_SPAN_MINUTES * this.config.WEBHOOK_RETRY_UNIT_MS;
    const bySetting = new Map<string, number>();
    let total = 0;
    while (!this.stopping) {
      const [rows] = await this.dataSource.query<[{ settings_id: string }[], number]>(EXPIRE_HELD_SQL, [
        spanMs,
        this.config.WEBHOOK_RETENTION_BATCH,
        observationGapMs(this.config),
      ]);
      for (const row of rows) bySetting.set(row.settings_id, (bySetting.get(row.settings_id) ?? 0) + 1);
      total += rows.length;
      if (rows.length === 0) break;
    }
    for (const [settingsId, count] of bySetting)
      this.logger.warn(
        `Setting ${settingsId}: ${count} webhooks failed, held back longer than the whole retry schedule ` +
          `(its receiver has failed all that time)`,
      );
    if (total > 0) this.metrics.deliveries.inc({ outcome: 'failed' }, total);
    return total;
  }
}
