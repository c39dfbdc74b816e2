import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { MAX_COOLDOWN_FACTOR } from './endpoint-scheduler.js';
import { DELAY_CAP_MINUTES } from './retry-policy.js';

/**
 * The longest an endpoint that is being tried goes without a scheduled attempt: twice the longest
 * retry delay (a lone failing webhook late in its schedule) and twice the longest cool-down of an
 * open circuit (one probe each). Nothing seen for longer means nobody was trying (delivery stopped).
 */
export function observationGapMs(
  config: Pick<WebhookConfig, 'WEBHOOK_RETRY_UNIT_MS' | 'WEBHOOK_BREAKER_COOLDOWN_MS'>,
): number {
  return Math.max(
    2 * DELAY_CAP_MINUTES * config.WEBHOOK_RETRY_UNIT_MS,
    2 * MAX_COOLDOWN_FACTOR * config.WEBHOOK_BREAKER_COOLDOWN_MS,
  );
}

/**
 * Each endpoint of $1 (settings_id, at) was tried: `tried_at` moves to its last attempt, written only
 * when it is more than a quarter of the gap ($2 ms) old, so an endpoint costs a row version per
 * quarter gap at most, not one per attempt. After a gap the failing streak starts again: the
 * attempts before it say nothing about the time nobody tried, so `failing_since` becomes the first
 * attempt after it (or stays later, if the recorder just set it from this batch's first failure).
 */
const NOTE_TRIED_SQL = `
  UPDATE webhook_settings s SET
    tried_at = x.last_at,
    failing_since = CASE
      WHEN s.failing_since IS NOT NULL
        AND (s.tried_at IS NULL OR s.tried_at < x.first_at - $2::bigint * interval '1 millisecond')
      THEN greatest(s.failing_since, x.first_at)
      ELSE s.failing_since END
  FROM (SELECT settings_id, min(at) AS first_at, max(at) AS last_at
          FROM jsonb_to_recordset($1::jsonb) AS r(settings_id uuid, at timestamptz)
         GROUP BY settings_id) x
  WHERE s.id = x.settings_id
    AND (s.tried_at IS NULL OR s.tried_at < x.last_at - $2::bigint / 4 * interval '1 millisecond')`;

/**
 * When each endpoint's scheduled attempts were last seen (`webhook_settings.tried_at`), so that
 * ExpireHeldWebhooks fails webhooks only at an endpoint that has been tried, and has failed, all the
 * time they waited: never those nobody tried (docs/webhook-fairness.md).
 */
@Injectable()
export class EndpointObservations {
  private readonly logger = new Logger(EndpointObservations.name);
  private readonly gapMs: number;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOK_CONFIG) config: WebhookConfig,
  ) {
    this.gapMs = observationGapMs(config);
  }

  /** Notes the attempts recorded; a failure is logged, never the attempts' (they are committed). */
  async tried(attempts: { settingsId: string; at: Date }[]): Promise<void> {
    if (attempts.length === 0) return;
    try {
      await this.dataSource.query(NOTE_TRIED_SQL, [
        JSON.stringify(attempts.map((a) => ({ settings_id: a.settingsId, at: a.at.toISOString() }))),
        this.gapMs,
      ]);
    } catch (error) {
      this.logger.warn(`Noting when endpoints were tried failed: ${String(error)}`);
    }
  }
}
