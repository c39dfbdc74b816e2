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
 *
 * Off the delivery path: `tried` only notes in memory, and one write at a time sends what is new. An
 * endpoint this process noted less than a quarter of the gap ago is not sent again, so a busy
 * endpoint costs one statement per quarter gap per process, not one per batch of attempts.
 */
@Injectable()
export class EndpointObservations {
  private readonly logger = new Logger(EndpointObservations.name);
  private readonly gapMs: number;
  /**
   * Per endpoint, the last attempt this process wrote as `tried_at` (ms), kept while it suppresses a
   * write (a quarter gap): older entries are dropped, so the map holds the endpoints tried lately,
   * not every endpoint ever tried.
   */
  private readonly written = new Map<string, number>();
  /** The newest attempt noted (ms), and when `written` was last cleared of old entries. */
  private newest = 0;
  private prunedAt = 0;
  /** Per endpoint, the first and last attempt not written yet. */
  private readonly unwritten = new Map<string, { first: number; last: number }>();
  private writing: Promise<void> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOK_CONFIG) config: WebhookConfig,
  ) {
    this.gapMs = observationGapMs(config);
  }

  /** Notes the attempts recorded; written in the background (a failure is logged and tried again). */
  tried(attempts: { settingsId: string; at: Date }[]): void {
    for (const { settingsId, at } of attempts) {
      const time = at.getTime();
      if (time > this.newest) this.newest = time;
      const written = this.written.get(settingsId);
      if (written !== undefined && time - written < this.gapMs / 4) continue;
      const noted = this.unwritten.get(settingsId);
      this.unwritten.set(settingsId, {
        first: Math.min(noted?.first ?? time, time),
        last: Math.max(noted?.last ?? time, time),
      });
    }
    if (this.unwritten.size > 0 && !this.writing) this.writing = this.writeNoted();
  }

  private async writeNoted(): Promise<void> {
    try {
      while (this.unwritten.size > 0) {
        const batch = [...this.unwritten];
        this.unwritten.clear();
        const rows = batch.flatMap(([settingsId, { first, last }]) => [
          { settings_id: settingsId, at: new Date(first).toISOString() },
          { settings_id: settingsId, at: new Date(last).toISOString() },
        ]);
        try {
          await this.dataSource.query(NOTE_TRIED_SQL, [JSON.stringify(rows), this.gapMs]);
          for (const [settingsId, { last }] of batch) this.written.set(settingsId, last);
          this.forgetOldWrites();
        } catch (error) {
          // Left unwritten: the next attempts at these endpoints bring them back.
          this.logger.warn(`Noting when endpoints were tried failed: ${String(error)}`);
          return;
        }
      }
    } finally {
      this.writing = null;
    }
  }

  /** Endpoints not written for a quarter gap suppress nothing more: one pass per quarter gap. */
  private forgetOldWrites(): void {
    const quarter = this.gapMs / 4;
    if (this.newest - this.prunedAt < quarter) return;
    this.prunedAt = this.newest;
    for (const [settingsId, written] of this.written) {
      if (this.newest - written >= quarter) this.written.delete(settingsId);
    }
  }

  /** How many endpoints this process remembers writing (their memory is what the pruning bounds). */
  get endpointsRemembered(): number {
    return this.written.size;
  }
}
