import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CredentialType, EventName, PaymentMethod, PublicEventContentOf } from '@byrd/contracts';
import { queryPrepared, queryReplanned } from '@byrd/platform';
import { DELAY_CAP_MINUTES, MAX_ATTEMPTS } from './retry-policy.js';
import { SettingsSecrets } from '../secrets/settings-secrets.js';

/** A delivery a worker holds: the webhook, where to send it and how to sign and authenticate it. */
export interface DeliveryJob {
  kind: 'scheduled' | 'resend';
  /** Webhook id (the `webhook-id` header and the body's `id`). */
  webhookId: string;
  /** The resend row, for a resend. */
  resendId: string | null;
  leaseToken: string;
  /** The attempt the claim started (the body's `attemptId`); null for a resend, named when sent. */
  attemptId: string | null;
  settingsId: string;
  event: EventName;
  paymentMethod: PaymentMethod | null;
  /** The event's public content, as fan-out stored it (toPublicContent). */
  content: PublicEventContentOf<EventName>;
  createdAt: Date;
  occurredAt: Date;
  /** Scheduled attempts already made. */
  attemptCount: number;
  /** The trace context of the event's handling: each attempt is a span of that trace. */
  traceparent: string | null;
  url: string;
  /** True when `url` is the settings' own address (a resend may go elsewhere). */
  toSettingsUrl: boolean;
  credentialType: CredentialType;
  apiKey: string | null;
  username: string | null;
  password: string | null;
  signingSecret: string;
  /** The setting's retryOn4xx. */
  retryOn4xx: boolean;
  /** Why the credential or secret could not be opened (a key missing from WEBHOOK_SECRETS_KEYS). */
  secretsError?: string;
}

/** What one attempt did, as recorded. */
export interface AttemptRecord {
  id: string;
  number: number | null;
  url: string;
  requestBody: string;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
  /**
   * What it says about the receiver (receiverVerdict): `failing_since` is kept from it; not stored
   * with the attempt. Null (a refusal) neither sets nor clears it.
   */
  verdict: boolean | null;
  startedAt: Date;
}

type JobRow = {
  kind: 'scheduled' | 'resend';
  webhook_id: string;
  resend_id: string | null;
  lease_token: string;
  attempt_id: string | null;
  settings_id: string;
  event: EventName;
  payment_method: PaymentMethod | null;
  content: PublicEventContentOf<EventName>;
  created_at: Date;
  occurred_at: Date;
  attempt_count: number;
  traceparent: string | null;
  url: string;
  to_settings_url: boolean;
  credential_type: CredentialType;
  api_key: string | null;
  username: string | null;
  password: string | null;
  signing_secret: string;
  retry_on_4xx: boolean;
};

/** What an attempt whose outcome was never recorded shows (GET /api/v1/webhooks/{id}/attempts). */
export const LOST_ATTEMPT_ERROR =
  'No outcome recorded: the worker stopped before recording this attempt; the receiver may have received it';

/**
 * What a lost attempt sent, as its worker built it (deliveryBody: the same fields in the same order,
 * `createdAt` as toISOString writes it), so its record reads as any attempt's, on any replica.
 */
const LOST_ATTEMPT_BODY = `json_build_object('id', w.id, 'event', w.event, 'paymentMethod', w.payment_method,
  'settingsId', w.settings_id, 'attemptId', l.open_attempt_id,
  'createdAt', to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'content', w.content)::text`;

const JOB_COLUMNS = `
  w.settings_id, w.event, w.payment_method, w.content, w.created_at, w.occurred_at, w.attempt_count,
  w.traceparent,
  s.credential_type, s.api_key, s.username, s.password, s.signing_secret, s.retry_on_4xx`;

/** Due for an attempt and held by no worker (a lease ends when its worker died mid-delivery). */
export const CLAIMABLE = `status = 'pending' AND (lease_until IS NULL OR lease_until <= now())`;

/**
 * Every setting with pending webhooks, one probe of webhooks_endpoint_due_idx each (a loose index
 * scan): the cost follows the endpoints waiting, not the rows, so a backlog of 100 000 rows at one
 * endpoint is never walked.
 */
export const PENDING_ENDPOINTS_CTE = `
  endpoints AS (
    (SELECT settings_id FROM webhooks WHERE status = 'pending' ORDER BY settings_id LIMIT 1)
    UNION ALL
    SELECT (SELECT w.settings_id FROM webhooks w
            WHERE w.status = 'pending' AND w.settings_id > e.settings_id ORDER BY w.settings_id LIMIT 1)
    FROM endpoints e WHERE e.settings_id IS NOT NULL
  )`;

/**
 * Discovery: each endpoint with a claimable webhook and the milliseconds until its first one is due
 * (0 or less: due now). Rows in flight (leased) are passed over, so the time is when a claim could
 * take something.
 */
export const DUE_ENDPOINTS_SQL = `
  WITH RECURSIVE ${PENDING_ENDPOINTS_CTE}
  SELECT e.settings_id,
    ceil(extract(epoch FROM (n.next_attempt_at - clock_timestamp())) * 1000)::float8 AS ms
  FROM endpoints e CROSS JOIN LATERAL (
    SELECT next_attempt_at FROM webhooks w
    WHERE w.settings_id = e.settings_id AND ${CLAIMABLE}
    ORDER BY next_attempt_at LIMIT 1) n
  WHERE e.settings_id IS NOT NULL`;

/**
 * A pending webhook of a deleted setting, as DeleteSettings leaves it: canceled, no attempt more (one
 * in flight that gets a 2xx still marks it succeeded).
 */
export const CANCELED = `status = 'canceled', next_attempt_at = NULL, lease_token = NULL, lease_until = NULL,
  finished_at = now()`;

/**
 * The rows of `table` due now, endpoint by endpoint ($1 the settings ids, $2 how many of each),
 * oldest first through the table's (settings_id, next_attempt_at) index, locked SKIP LOCKED; `deleted`
 * tells the rows of a deleted setting; `claimable` narrows the rows further; `columns` (", a, b")
 * adds columns of the rows as they were when locked. Shared by both claims.
 */
function dueByEndpoint(table: 'webhooks' | 'webhook_resends', claimable?: string, columns = ''): string {
  return `
    SELECT d.*, s.deleted_at IS NOT NULL AS deleted
    FROM unnest($1::uuid[], $2::int[]) AS e(settings_id, n)
    JOIN webhook_settings s ON s.id = e.settings_id
    CROSS JOIN LATERAL (
      SELECT id${columns} FROM ${table}
      WHERE settings_id = e.settings_id${claimable ? ` AND ${claimable}` : ''} AND next_attempt_at <= now()
      ORDER BY next_attempt_at
      LIMIT e.n
      FOR UPDATE SKIP LOCKED) d`;
}

/**
 * The claim of due webhooks, endpoint by endpoint: $1 the settings ids, $2 how many rows of each
 * (the worker's fair shares, endpoint-scheduler.ts), $3 the lease in ms. Each endpoint's oldest due
 * rows are read through webhooks_endpoint_due_idx (so another endpoint's backlog costs nothing),
 * locked with SKIP LOCKED, so replicas never claim the same row, and leased by setting lease_until,
 * which no index covers (an in-place update). The ids go through an array, so the plan updates them
 * by primary key whatever the statistics say (as a join, one endpoint's large backlog made the
 * generic plan expect thousands of rows and hash the whole table). The statement commits at once:
 * no transaction stays open during the HTTP call, and a worker that dies leaves a row that simply
 * becomes claimable again when its lease ends.
 *
 * Rows of a deleted setting are canceled instead: a fan-out that read the setting before
 * DeleteSettings committed can commit its webhooks after the delete canceled the pending ones.
 *
 * Each claim starts its attempt in the row before the request goes out (`open_attempt_id`, the body's
 * `attemptId`; write-ahead, as payments records a payment before the acquirer). A due row whose
 * attempt is still open was claimed by a worker that died, or lost its database, after sending: that
 * attempt is recorded with no outcome (LOST_ATTEMPT_ERROR; a record that comes late fills it in),
 * counted, and the row scheduled as after any failed attempt ($4 the retry minute in ms, $5 the most
 * attempts, $6 the cap in minutes), so a receiver whose answers crash the worker still ends failed
 * after 51 attempts on the schedule instead of being sent again every lease for ever.
 */
export const CLAIM_WEBHOOKS_SQL = `
  WITH due AS MATERIALIZED (
    ${dueByEndpoint('webhooks', CLAIMABLE, ', open_attempt_id, open_attempt_at, attempt_count')}),
  canceled AS (
    UPDATE webhooks SET ${CANCELED} WHERE id = ANY (ARRAY(SELECT id FROM due WHERE deleted))
  ),
  lost AS MATERIALIZED (
    SELECT d.id, d.open_attempt_id, d.open_attempt_at, d.attempt_count + 1 AS number,
      CASE WHEN d.attempt_count + 1 < $5 THEN least(d.attempt_count + 1, $6) * $4::int END AS retry_delay_ms
    FROM due d WHERE NOT d.deleted AND d.open_attempt_id IS NOT NULL
      -- Recorded after all (its worker lost the lease; or a replica of the release before, which
      -- leaves the column as it is, took the row over): nothing lost, the row is claimed as usual.
      AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.id = d.open_attempt_id)
  ),
  lost_attempts AS (
    INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, status_code,
      response_body, error, duration_ms, succeeded, retry_delay_ms, created_at)
    SELECT l.open_attempt_id, l.id, 'scheduled', l.number, s.url, ${LOST_ATTEMPT_BODY}, NULL, NULL,
      '${LOST_ATTEMPT_ERROR}', 0, false, l.retry_delay_ms, l.open_attempt_at
    FROM lost l JOIN webhooks w ON w.id = l.id JOIN webhook_settings s ON s.id = w.settings_id
    ON CONFLICT (id) DO NOTHING
  ),
  closed AS (
    UPDATE webhooks w SET
      attempt_count = l.number,
      status = CASE WHEN l.retry_delay_ms IS NULL THEN 'failed' ELSE 'pending' END,
      next_attempt_at = now() + l.retry_delay_ms * interval '1 millisecond',
      finished_at = CASE WHEN l.retry_delay_ms IS NULL THEN now() END,
      open_attempt_id = NULL, open_attempt_at = NULL, lease_token = NULL, lease_until = NULL
    FROM lost l WHERE w.id = l.id
  )
  UPDATE webhooks w
  SET lease_until = now() + $3::int * interval '1 millisecond', lease_token = gen_random_uuid(),
    open_attempt_id = gen_random_uuid(), open_attempt_at = now()
  FROM webhook_settings s
  WHERE w.id = ANY (ARRAY(SELECT id FROM due WHERE NOT deleted EXCEPT SELECT id FROM lost))
    AND s.id = w.settings_id
  RETURNING 'scheduled' AS kind, w.id AS webhook_id, NULL::uuid AS resend_id, w.lease_token,
    w.open_attempt_id AS attempt_id, s.url, true AS to_settings_url, ${JOB_COLUMNS}`;

/**
 * Discovery of resends: each endpoint with a resend queued and the milliseconds until its first one
 * can be claimed (a resend in flight has its lease's end there), one probe of
 * webhook_resends_endpoint_due_idx per endpoint, like DUE_ENDPOINTS_SQL.
 */
export const DUE_RESEND_ENDPOINTS_SQL = `
  WITH RECURSIVE endpoints AS (
    (SELECT settings_id FROM webhook_resends ORDER BY settings_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.settings_id FROM webhook_resends r
            WHERE r.settings_id > e.settings_id ORDER BY r.settings_id LIMIT 1)
    FROM endpoints e WHERE e.settings_id IS NOT NULL
  )
  SELECT e.settings_id,
    ceil(extract(epoch FROM (n.next_attempt_at - clock_timestamp())) * 1000)::float8 AS ms
  FROM endpoints e CROSS JOIN LATERAL (
    SELECT next_attempt_at FROM webhook_resends r
    WHERE r.settings_id = e.settings_id
    ORDER BY next_attempt_at LIMIT 1) n
  WHERE e.settings_id IS NOT NULL`;

/**
 * The claim of due resends, endpoint by endpoint as CLAIM_WEBHOOKS_SQL (the same parameters: the
 * slots of each endpoint's fair share given to resends), oldest first, leased in next_attempt_at;
 * those of a deleted setting are dropped, never sent.
 */
export const CLAIM_RESENDS_SQL = `
  WITH due AS MATERIALIZED (${dueByEndpoint('webhook_resends')}),
  dropped AS (
    DELETE FROM webhook_resends WHERE id = ANY (ARRAY(SELECT id FROM due WHERE deleted))
  )
  UPDATE webhook_resends r
  SET next_attempt_at = now() + $3::int * interval '1 millisecond', lease_token = gen_random_uuid()
  FROM webhooks w, webhook_settings s
  WHERE r.id = ANY (ARRAY(SELECT id FROM due WHERE NOT deleted))
    AND w.id = r.webhook_id AND s.id = r.settings_id
  RETURNING 'resend' AS kind, w.id AS webhook_id, r.id AS resend_id, r.lease_token, NULL::uuid AS attempt_id,
    coalesce(r.url, s.url) AS url, r.url IS NULL OR r.url = s.url AS to_settings_url, ${JOB_COLUMNS}`;

/**
 * An attempt's record that finds its row already written (a claim recorded it as lost while this
 * worker, paused past its lease, was still waiting for the answer) fills in the outcome; the delay
 * the claim scheduled stays, as it is the one the webhook follows.
 */
const FILL_IN_LOST_ATTEMPT = `
  ON CONFLICT (id) DO UPDATE SET request_body = EXCLUDED.request_body, status_code = EXCLUDED.status_code,
    response_body = EXCLUDED.response_body, error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms,
    succeeded = EXCLUDED.succeeded
  WHERE webhook_attempts.error = '${LOST_ATTEMPT_ERROR}'`;

const INSERT_ATTEMPT = `
  INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, status_code,
    response_body, error, duration_ms, succeeded, retry_delay_ms, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

/**
 * Keeps each endpoint's `failing_since` (webhook_settings) as its scheduled attempts find it: set at
 * the first failure after a success, cleared by any success. `outcomes` yields (webhook_id,
 * verdict, created_at), the verdict of receiverVerdict: a refusal (null) is an answer from a
 * receiver that is up, and neither sets nor clears it. Only a change is written, so an endpoint that
 * keeps answering (or keeps failing) costs an index probe, not a row version. ExpireHeldWebhooks
 * reads it.
 */
function endpointHealth(outcomes: string): string {
  return `
    UPDATE webhook_settings s
       SET failing_since = CASE WHEN o.succeeded THEN NULL ELSE o.first_at END
      FROM (SELECT w.settings_id, bool_or(x.verdict) AS succeeded, min(x.created_at) AS first_at
              FROM (${outcomes}) x JOIN webhooks w ON w.id = x.webhook_id
             WHERE x.verdict IS NOT NULL
             GROUP BY w.settings_id) o
     WHERE s.id = o.settings_id
       AND CASE WHEN o.succeeded THEN s.failing_since IS NOT NULL ELSE s.failing_since IS NULL END`;
}

/**
 * The attempt and the webhook's new state in one statement (one round trip, one transaction). Only
 * the lease holder moves a pending webhook, except on a success: the receiver has the webhook, even
 * when this replica was paused past its lease and another has taken it over or failed it, or its
 * setting was deleted (canceled) during the request. Only a webhook already succeeded is left alone.
 * attempt_count never goes back: a late success may carry a lower number than the attempts since.
 */
const RECORD_SCHEDULED_SQL = `
  WITH attempt AS (${INSERT_ATTEMPT} ${FILL_IN_LOST_ATTEMPT}),
  health AS (${endpointHealth('SELECT $2::uuid AS webhook_id, $16::boolean AS verdict, $13::timestamptz AS created_at')}),
  moved AS (
    UPDATE webhooks SET
      attempt_count = greatest(attempt_count, $4),
      status = $15,
      next_attempt_at = CASE WHEN $15 = 'pending'
        THEN clock_timestamp() + $12::int * interval '1 millisecond' END,
      lease_token = NULL,
      lease_until = NULL,
      open_attempt_id = NULL,
      open_attempt_at = NULL,
      sent_at = CASE WHEN $11 THEN clock_timestamp() ELSE sent_at END,
      finished_at = CASE WHEN $15 <> 'pending' THEN clock_timestamp() END
    WHERE id = $2 AND (status = 'pending' AND lease_token = $14 OR $11 AND status <> 'succeeded')
    RETURNING id
  )
  SELECT count(*)::int AS moved FROM moved`;

/**
 * Several scheduled attempts and their webhooks' new states in one statement: under load the
 * recorder (attempt-recorder.ts) writes what finished meanwhile together, one commit for many.
 * Returns the ids of the webhooks moved (moved as RECORD_SCHEDULED_SQL moves them).
 */
const RECORD_SCHEDULED_BATCH_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, webhook_id uuid, number int, url text,
      request_body text, status_code int, response_body text, error text, duration_ms int,
      succeeded boolean, verdict boolean, retry_delay_ms int, created_at timestamptz, lease_token uuid,
      status text)
  ),
  attempt AS (
    INSERT INTO webhook_attempts (id, webhook_id, kind, number, url, request_body, status_code,
      response_body, error, duration_ms, succeeded, retry_delay_ms, created_at)
    SELECT id, webhook_id, 'scheduled', number, url, request_body, status_code, response_body, error,
      duration_ms, succeeded, retry_delay_ms, created_at
    FROM input
    ${FILL_IN_LOST_ATTEMPT}
  ),
  health AS (${endpointHealth('SELECT webhook_id, verdict, created_at FROM input')}),
  moved AS (
    UPDATE webhooks w SET
      attempt_count = greatest(w.attempt_count, i.number),
      status = i.status,
      next_attempt_at = CASE WHEN i.status = 'pending'
        THEN clock_timestamp() + i.retry_delay_ms * interval '1 millisecond' END,
      lease_token = NULL,
      lease_until = NULL,
      open_attempt_id = NULL,
      open_attempt_at = NULL,
      sent_at = CASE WHEN i.succeeded THEN clock_timestamp() ELSE w.sent_at END,
      finished_at = CASE WHEN i.status <> 'pending' THEN clock_timestamp() END
    FROM input i
    WHERE w.id = i.webhook_id
      AND (w.status = 'pending' AND w.lease_token = i.lease_token OR i.succeeded AND w.status <> 'succeeded')
    RETURNING w.id
  )
  SELECT id FROM moved`;

/** What a finished scheduled attempt did to its webhook. */
export interface ScheduledOutcome {
  status: 'succeeded' | 'failed' | 'pending';
  retryDelayMs: number | null;
}

/**
 * A resend is one extra attempt: its row goes, and the schedule is untouched, except that a
 * success at the settings' own address delivers the webhook (no further retries are needed).
 */
const RECORD_RESEND_SQL = `
  WITH attempt AS (${INSERT_ATTEMPT}),
  done AS (DELETE FROM webhook_resends WHERE id = $14 AND lease_token = $15 RETURNING id),
  delivered AS (
    UPDATE webhooks SET status = 'succeeded', next_attempt_at = NULL, lease_token = NULL, lease_until = NULL,
      sent_at = clock_timestamp(), finished_at = clock_timestamp()
    WHERE id = $2 AND $11 AND $16 AND status <> 'succeeded'
    RETURNING id
  )
  SELECT (SELECT count(*)::int FROM done) AS done, (SELECT count(*)::int FROM delivered) AS delivered`;

/**
 * A claimed webhook let go of unsent (its setting's secrets open with no key of this process): its
 * lease ends now, so any replica may take it (one that holds the key sends it); its attempts,
 * schedule and status are untouched. Only the claim's holder lets go ($2, its lease token).
 */
const RELEASE_UNSENT_SQL = `
  UPDATE webhooks SET lease_token = NULL, lease_until = NULL, open_attempt_id = NULL, open_attempt_at = NULL
  WHERE id = $1 AND status = 'pending' AND lease_token = $2`;

/** A claimed resend let go of unsent, as RELEASE_UNSENT_SQL: claimable again now. */
const RELEASE_UNSENT_RESEND_SQL = `
  UPDATE webhook_resends SET next_attempt_at = now(), lease_token = NULL
  WHERE id = $1 AND lease_token = $2`;

/** Of the settings $1, those not deleted. */
const LIVE_SETTINGS_SQL = `
  SELECT id FROM webhook_settings WHERE id = ANY ($1::uuid[]) AND deleted_at IS NULL`;

/**
 * The webhooks table as the delivery worker sees it: claims due webhooks and resends under a lease,
 * and records what each attempt did (a repository over SQL, not an in-memory queue).
 */
@Injectable()
export class DeliveryRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SettingsSecrets,
  ) {}

  /**
   * A claimed row as a job, its credential and signing secret opened (they are stored sealed). One
   * that cannot be opened becomes a job that fails its attempt with the reason, rather than an error
   * that would hold back the other deliveries of the claim.
   */
  private toJob(row: JobRow): DeliveryJob {
    const job = toJob(row);
    try {
      return {
        ...job,
        apiKey: this.secrets.open(job.settingsId, 'api_key', job.apiKey),
        password: this.secrets.open(job.settingsId, 'password', job.password),
        signingSecret: this.secrets.open(job.settingsId, 'signing_secret', job.signingSecret),
      };
    } catch (error) {
      const reason = `the setting's credentials could not be opened (${(error as Error).message})`;
      return { ...job, apiKey: null, password: null, signingSecret: '', secretsError: reason };
    }
  }

  /**
   * Up to `rows.get(settingsId)` due webhooks of each endpoint, oldest first, each with its attempt
   * started; a due row whose last attempt was never recorded is closed and rescheduled instead
   * (`retryMinuteMs`: WEBHOOK_RETRY_UNIT_MS), not claimed.
   */
  claimWebhooks(
    rows: ReadonlyMap<string, number>,
    leaseMs: number,
    retryMinuteMs: number,
  ): Promise<DeliveryJob[]> {
    return this.claim(CLAIM_WEBHOOKS_SQL, rows, leaseMs, [retryMinuteMs, MAX_ATTEMPTS, DELAY_CAP_MINUTES]);
  }

  /** Up to `rows.get(settingsId)` due resends of each endpoint, oldest first. */
  claimResends(rows: ReadonlyMap<string, number>, leaseMs: number): Promise<DeliveryJob[]> {
    return this.claim(CLAIM_RESENDS_SQL, rows, leaseMs);
  }

  private async claim(sql: string, rows: ReadonlyMap<string, number>, leaseMs: number, more: number[] = []) {
    const claimed = await queryPrepared<JobRow>(this.dataSource, sql, [
      [...rows.keys()],
      [...rows.values()],
      leaseMs,
      ...more,
    ]);
    return claimed.map((row) => this.toJob(row));
  }

  /**
   * Records a scheduled attempt and moves the webhook: `succeeded`, `failed` (no retry left), or
   * `pending` again in `retryDelayMs`. Returns false when the lease had been lost and the attempt
   * failed, or the webhook had already succeeded (the webhook is left alone; the attempt is still
   * recorded, since it happened).
   */
  async recordScheduled(
    job: DeliveryJob,
    attempt: AttemptRecord,
    outcome: ScheduledOutcome,
  ): Promise<boolean> {
    const [row] = await queryPrepared<{ moved: number }>(this.dataSource, RECORD_SCHEDULED_SQL, [
      ...attemptParams(job, attempt, 'scheduled', outcome.retryDelayMs),
      job.leaseToken,
      outcome.status,
      attempt.verdict,
    ]);
    return row.moved === 1;
  }

  /** `recordScheduled` for many attempts in one statement; answers the ids of the webhooks moved. */
  async recordScheduledBatch(
    records: { job: DeliveryJob; attempt: AttemptRecord; outcome: ScheduledOutcome }[],
  ): Promise<Set<string>> {
    const input = records.map(({ job, attempt, outcome }) => ({
      id: attempt.id,
      webhook_id: job.webhookId,
      number: attempt.number,
      url: attempt.url,
      request_body: attempt.requestBody,
      status_code: attempt.statusCode,
      response_body: attempt.responseBody,
      error: attempt.error,
      duration_ms: attempt.durationMs,
      succeeded: attempt.succeeded,
      verdict: attempt.verdict,
      retry_delay_ms: outcome.retryDelayMs,
      created_at: attempt.startedAt,
      lease_token: job.leaseToken,
      status: outcome.status,
    }));
    // Planned per batch: with no top-level status condition (a late success moves a failed or canceled
    // webhook too), a generic plan made while the table was young joins by scanning all of it.
    const rows = await queryReplanned<{ id: string }>(this.dataSource, RECORD_SCHEDULED_BATCH_SQL, [
      JSON.stringify(input),
    ]);
    return new Set(rows.map((row) => row.id));
  }

  /** Records a resend attempt and removes the resend; returns whether it delivered the webhook. */
  async recordResend(job: DeliveryJob, attempt: AttemptRecord): Promise<boolean> {
    const [row] = await queryPrepared<{ done: number; delivered: number }>(
      this.dataSource,
      RECORD_RESEND_SQL,
      [...attemptParams(job, attempt, 'resend', null), job.resendId, job.leaseToken, job.toSettingsUrl],
    );
    return row.delivered === 1;
  }

  /**
   * Lets go of a claimed delivery that was not sent (its setting's secrets could not be opened
   * here), recording nothing: no attempt was made. A lease already lost is left alone.
   */
  async releaseUnsent(job: DeliveryJob): Promise<void> {
    const [sql, id] =
      job.kind === 'resend' ? [RELEASE_UNSENT_RESEND_SQL, job.resendId] : [RELEASE_UNSENT_SQL, job.webhookId];
    await queryPrepared(this.dataSource, sql, [id, job.leaseToken]);
  }

  /** Which of these settings still exist, not deleted. */
  async liveSettings(settingsIds: readonly string[]): Promise<Set<string>> {
    const rows = await queryPrepared<{ id: string }>(this.dataSource, LIVE_SETTINGS_SQL, [settingsIds]);
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Each endpoint with a claimable webhook, and the milliseconds until its first one is due; the same
   * for the endpoints with resends queued.
   */
  async dueEndpoints(): Promise<{ scheduled: Map<string, number>; resends: Map<string, number> }> {
    type Row = { settings_id: string; ms: number };
    const scheduled = await queryPrepared<Row>(this.dataSource, DUE_ENDPOINTS_SQL, []);
    const resends = await queryPrepared<Row>(this.dataSource, DUE_RESEND_ENDPOINTS_SQL, []);
    const byEndpoint = (rows: Row[]) => new Map(rows.map((row) => [row.settings_id, row.ms]));
    return { scheduled: byEndpoint(scheduled), resends: byEndpoint(resends) };
  }
}

function attemptParams(job: DeliveryJob, attempt: AttemptRecord, kind: string, retryDelayMs: number | null) {
  return [
    attempt.id,
    job.webhookId,
    kind,
    attempt.number,
    attempt.url,
    attempt.requestBody,
    attempt.statusCode,
    attempt.responseBody,
    attempt.error,
    attempt.durationMs,
    attempt.succeeded,
    retryDelayMs,
    attempt.startedAt,
  ];
}

function toJob(row: JobRow): DeliveryJob {
  return {
    kind: row.kind,
    webhookId: row.webhook_id,
    resendId: row.resend_id,
    leaseToken: row.lease_token,
    attemptId: row.attempt_id,
    settingsId: row.settings_id,
    event: row.event,
    paymentMethod: row.payment_method,
    content: row.content,
    createdAt: row.created_at,
    occurredAt: row.occurred_at,
    attemptCount: row.attempt_count,
    traceparent: row.traceparent,
    url: row.url,
    toSettingsUrl: row.to_settings_url,
    credentialType: row.credential_type,
    apiKey: row.api_key,
    username: row.username,
    password: row.password,
    signingSecret: row.signing_secret,
    retryOn4xx: row.retry_on_4xx,
  };
}
