import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { queryPrepared } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';

/** What one sent attempt says about its endpoint. */
export interface EndpointOutcome {
  settingsId: string;
  /** HTTP status, null when no answer came. */
  statusCode: number | null;
  error: string | null;
}

/** Statuses that say "overloaded or down" although the receiver answered. */
const FAILING_STATUSES = new Set([408, 429]);

/**
 * Whether an attempt counts against its endpoint: no answer (timeout, refused connection), a 5xx,
 * a 408 or a 429. Any other answer (2xx, 3xx, another 4xx) shows the endpoint is up, and closes its
 * circuit: a receiver refusing one payload is not a receiver that is down.
 */
export function isEndpointFailure(outcome: Pick<EndpointOutcome, 'statusCode'>): boolean {
  const status = outcome.statusCode;
  return status === null || status >= 500 || FAILING_STATUSES.has(status);
}

interface EndpointTally {
  settings_id: string;
  failures: number;
  answered: boolean;
  error: string | null;
}

/**
 * One statement for a batch of outcomes, per endpoint: an answer closes the circuit (and resets
 * the count); failures add up, and reaching $2 in a row opens the circuit until now + $3 ms (a
 * failed probe opens it again for another cool-down). Endpoints that only succeed and never
 * failed are not written at all. Answers the transitions, with the state before.
 */
const RECORD_OUTCOMES_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
      AS x(settings_id uuid, failures int, answered boolean, error text)
  ),
  before AS (
    SELECT settings_id, state FROM webhook_circuits WHERE settings_id IN (SELECT settings_id FROM input)
  ),
  closed AS (
    UPDATE webhook_circuits c
    SET state = 'closed', failures = 0, retry_at = NULL, opened_at = NULL, updated_at = now()
    FROM input i
    WHERE c.settings_id = i.settings_id AND i.answered AND (c.failures > 0 OR c.state <> 'closed')
    RETURNING c.settings_id, c.failures
  ),
  failed AS (
    INSERT INTO webhook_circuits AS c (settings_id, state, failures, retry_at, opened_at, last_error)
    SELECT settings_id,
      CASE WHEN failures >= $2 THEN 'open' ELSE 'closed' END, failures,
      CASE WHEN failures >= $2 THEN now() + $3::int * interval '1 millisecond' END,
      CASE WHEN failures >= $2 THEN now() END, error
    FROM input WHERE NOT answered
    ON CONFLICT (settings_id) DO UPDATE SET
      failures = c.failures + excluded.failures,
      state = CASE WHEN c.failures + excluded.failures >= $2 THEN 'open' ELSE c.state END,
      retry_at = CASE WHEN c.failures + excluded.failures >= $2
        THEN now() + $3::int * interval '1 millisecond' ELSE c.retry_at END,
      opened_at = CASE WHEN c.state = 'closed' AND c.failures + excluded.failures >= $2
        THEN now() ELSE c.opened_at END,
      last_error = excluded.last_error,
      updated_at = now()
    RETURNING c.settings_id, c.state, c.failures, c.last_error
  )
  SELECT f.settings_id, coalesce(b.state, 'closed') AS was, f.state, f.failures, f.last_error
  FROM failed f LEFT JOIN before b USING (settings_id) WHERE f.state <> coalesce(b.state, 'closed')
  UNION ALL
  SELECT c.settings_id, b.state AS was, 'closed', 0, NULL
  FROM closed c JOIN before b USING (settings_id) WHERE b.state <> 'closed'`;

/**
 * The circuit breaker of each endpoint (one setting's URL), kept in PostgreSQL so every replica
 * sees the same state (docs/webhook-fairness.md). The claim reads it (claimWebhooksSql): an open
 * circuit holds the endpoint's due webhooks back (no attempt counted, nothing dropped) until its
 * cool-down ends and one probe goes out; the probe's answer closes it or opens it again.
 */
@Injectable()
export class EndpointBreaker {
  private readonly logger = new Logger(EndpointBreaker.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: WebhookMetrics,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  /** Counts what finished attempts said about their endpoints, and moves circuits accordingly. */
  async record(outcomes: EndpointOutcome[]): Promise<void> {
    const tallies = new Map<string, EndpointTally>();
    for (const outcome of outcomes) {
      const tally = tallies.get(outcome.settingsId) ?? {
        settings_id: outcome.settingsId,
        failures: 0,
        answered: false,
        error: null,
      };
      if (isEndpointFailure(outcome)) {
        tally.failures += 1;
        tally.error = outcome.error ?? `HTTP ${outcome.statusCode}`;
      } else tally.answered = true;
      tallies.set(outcome.settingsId, tally);
    }
    // The common case, healthy endpoints: nothing to write unless one of them had been failing.
    const rows = await queryPrepared<{
      settings_id: string;
      was: string;
      state: string;
      failures: number;
      last_error: string | null;
    }>(this.dataSource, RECORD_OUTCOMES_SQL, [
      JSON.stringify([...tallies.values()]),
      this.config.WEBHOOK_BREAKER_FAILURES,
      this.config.WEBHOOK_BREAKER_COOLDOWN_MS,
    ]);
    for (const row of rows) {
      this.metrics.circuitTransitions.inc({ to: row.state });
      if (row.state === 'closed')
        this.logger.log(`Setting ${row.settings_id}: circuit closed, the endpoint answers again`);
      else if (row.was === 'closed')
        this.logger.warn(
          `Setting ${row.settings_id}: circuit open after ${row.failures} failed attempts in a row ` +
            `(last: ${row.last_error}); its deliveries wait, one probe every ` +
            `${this.config.WEBHOOK_BREAKER_COOLDOWN_MS} ms`,
        );
    }
  }
}
