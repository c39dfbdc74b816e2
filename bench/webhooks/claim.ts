// The claim phase: with the service stopped, the latency of the statement its delivery workers claim
// due webhooks with (the app's public export "./claim", not a copy), asked for WEBHOOK_CLAIM_BATCH rows
// of the bench setting, with SMALL_FUTURE_ROWS then --future-rows pending retries due in the future
// and --due-rows due now; each run in a transaction rolled back, so every run claims the same rows.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { poolFor } from '../core/environment.js';
import { cpuBetween, cpuSnapshot, waitForQuietMachine } from '../core/proc-stats.js';
import { fail, note, round, step, summarise, target } from '../core/util.js';
import { explain } from './explain.js';
import { SERVICE } from './stack.js';

export const SMALL_FUTURE_ROWS = 10_000;
const CLAIM_WARMUP_RUNS = 30;
/** The index the claim reads due rows through: each endpoint's, or (before fairness) the global one. */
const DUE_INDEXES = ['webhooks_endpoint_due_idx', 'webhooks_due_idx'];
const CLAIM_EXPORT = './claim';

/** The file apps/webhook-service exports as "./claim" (package.json "exports"), or null. */
export function claimFile(): string | null {
  const dir = join(target.root, 'apps', SERVICE);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports?: Record<string, string | { default?: string }>;
  };
  const entry = manifest.exports?.[CLAIM_EXPORT];
  const file = typeof entry === 'string' ? entry : entry?.default;
  return file ? join(dir, file) : null;
}

/** Fails (before anything starts) when the code under test does not export the claim statement. */
export function requireClaimExport(): string {
  const file = claimFile();
  if (!file || !existsSync(file))
    fail(
      `apps/${SERVICE} exports no "${CLAIM_EXPORT}" at this revision (package.json "exports"); run with --no-claim.`,
    );
  return file;
}

async function claimStatement(): Promise<string> {
  const file = requireClaimExport();
  const { CLAIM_WEBHOOKS_SQL } = (await import(pathToFileURL(file).href)) as { CLAIM_WEBHOOKS_SQL?: unknown };
  if (typeof CLAIM_WEBHOOKS_SQL !== 'string') fail(`${file} does not export CLAIM_WEBHOOKS_SQL.`);
  return CLAIM_WEBHOOKS_SQL;
}

export interface ClaimSettings {
  dueRows: number;
  futureRows: number;
  claimRuns: number;
  quietWaitS: number;
  serviceEnv: Record<string, string>;
}

/** Webhooks g = from..to of the bench setting: due now, or retries an hour or more ahead. */
function insertRows(
  pool: pg.Pool,
  ids: { merchantId: string; settingsId: string },
  from: number,
  to: number,
  due: boolean,
) {
  const content = JSON.stringify({
    transactionId: randomUUID(),
    orderId: null,
    orderRef: 'bench-webhook',
    status: 'Failed',
    operationType: 'Payment',
    amount: '25.00',
    currency: 'EUR',
    code: 'BYRD200',
    description: 'Operation successfully completed',
  });
  return pool.query(
    `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
       content, occurred_at, status, attempt_count, next_attempt_at, created_at)
     SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'transaction.payment.success', 'card',
       ARRAY[gen_random_uuid()::text], $3::jsonb, now() - interval '1 hour', 'pending', 1 + g % 50,
       ${due ? `now() - interval '1 minute' + g * interval '1 ms'` : `now() + interval '1 hour' + g * interval '10 ms'`},
       now() - interval '1 hour'
     FROM generate_series($4::int, $5::int) g`,
    [ids.merchantId, ids.settingsId, content, from, to],
  );
}

/** The due index this revision has (each endpoint's, or before fairness the global one). */
async function dueIndexOf(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ indexname: string }>(
    `SELECT indexname FROM pg_indexes WHERE tablename = 'webhooks' AND indexname = ANY ($1)`,
    [DUE_INDEXES],
  );
  return rows[0]?.indexname ?? DUE_INDEXES[0];
}

/** One claim in a transaction rolled back: its time and how many rows it claimed. */
async function claimOnce(pool: pg.Pool, sql: string, params: unknown[]) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const start = performance.now();
    const answer = await client.query(sql, params);
    const ms = performance.now() - start;
    await client.query('ROLLBACK');
    return { ms, claimed: answer.rowCount };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export async function measureClaim(
  databaseUrl: string,
  ids: { merchantId: string; settingsId: string },
  s: ClaimSettings,
) {
  const sql = await claimStatement();
  // What the service's workers pass: WEBHOOK_CLAIM_BATCH and WEBHOOK_LEASE_MS (their defaults unless set).
  const claimBatch = Number(s.serviceEnv.WEBHOOK_CLAIM_BATCH ?? 100);
  const leaseMs = Number(s.serviceEnv.WEBHOOK_LEASE_MS ?? 30_000);
  // The claim by endpoint ($1 settings, $2 rows of each, $3 lease; since write-ahead attempts also $4
  // the retry minute, $5 the most attempts, $6 the delay cap in minutes: the defaults) or, measuring
  // an older commit, the claim of the oldest due rows overall ($1 rows, $2 lease).
  const perEndpoint = /\$3\b/.test(sql);
  const writeAhead = /\$6\b/.test(sql);
  const params = perEndpoint
    ? [[ids.settingsId], [claimBatch], leaseMs, ...(writeAhead ? [60_000, 51, 60] : [])]
    : [claimBatch, leaseMs];
  const pool = poolFor(databaseUrl, 1);
  const sizes: ClaimSize[] = [];
  let dueIndex: string;
  try {
    dueIndex = await dueIndexOf(pool);
    const started = performance.now();
    await insertRows(pool, ids, 1, s.dueRows, true);
    let stored = 0;
    for (const futureRows of [SMALL_FUTURE_ROWS, Math.max(SMALL_FUTURE_ROWS, s.futureRows)]) {
      if (sizes.length && futureRows === stored) break;
      step(`Claim query: ${futureRows} future retries + ${s.dueRows} due`);
      const t0 = performance.now();
      await insertRows(pool, ids, stored + 1, futureRows, false);
      stored = futureRows;
      await pool.query('VACUUM (ANALYZE) webhooks');
      const fillSeconds = (performance.now() - t0) / 1000;
      note(`stored in ${round(fillSeconds, 1)} s (insert + VACUUM ANALYZE)`);
      if (s.quietWaitS > 0) await waitForQuietMachine(s.quietWaitS);
      const size = await measureSize(pool, sql, params, {
        ...s,
        futureRows,
        claimBatch,
        dueIndex,
        fillSeconds,
      });
      sizes.push(size);
      const { latencyMs, plan } = size;
      note(
        `claim of ${size.claimedPerRun}: p50 ${latencyMs.p50} ms, p99 ${latencyMs.p99} ms; plan: ${plan.summary.join(' | ')}`,
      );
    }
    note(`claim phase took ${round((performance.now() - started) / 1000, 1)} s`);
  } finally {
    await pool.end();
  }
  const [small, large] = sizes;
  const ratio = (of: (size: (typeof sizes)[number]) => number | null) =>
    large ? round(Number(of(large)) / Number(of(small)), 3) : null;
  return {
    statement: `CLAIM_WEBHOOKS_SQL exported by apps/${SERVICE} as "${CLAIM_EXPORT}"`,
    limit: claimBatch,
    leaseMs,
    perEndpoint,
    dueIndex,
    sizes,
    ratioP50: ratio((size) => size.latencyMs.p50),
    ratioP99: ratio((size) => size.latencyMs.p99),
    ratioMean: ratio((size) => size.latencyMs.mean),
  };
}

export type ClaimResult = Awaited<ReturnType<typeof measureClaim>>;
type ClaimSize = Awaited<ReturnType<typeof measureSize>>;

/** Warm-up runs, then --claim-runs measured ones, the plan and the sizes of table and index. */
async function measureSize(
  pool: pg.Pool,
  sql: string,
  params: unknown[],
  s: ClaimSettings & { claimBatch: number; dueIndex: string; fillSeconds: number },
) {
  for (let i = 0; i < CLAIM_WARMUP_RUNS; i++) await claimOnce(pool, sql, params);
  const before = cpuSnapshot({ machine: 'machine' });
  const times = [];
  let claimedWrong = 0;
  const claimedPerRun = Math.min(s.claimBatch, s.dueRows);
  for (let i = 0; i < s.claimRuns; i++) {
    const { ms, claimed } = await claimOnce(pool, sql, params);
    times.push(ms);
    if (claimed !== claimedPerRun) claimedWrong++;
  }
  const machineCores = cpuBetween(before, cpuSnapshot({ machine: 'machine' })).groups.machine.cores;
  const plan = await explain(pool, sql, params, s.dueIndex);
  const { rows } = await pool.query<{
    pending: number;
    total: number;
    due_index_bytes: string;
    table_bytes: string;
  }>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*)::int AS total,
       pg_relation_size('${s.dueIndex}') AS due_index_bytes, pg_relation_size('webhooks') AS table_bytes
     FROM webhooks`,
  );
  return {
    futureRows: s.futureRows,
    dueRows: s.dueRows,
    storedRows: rows[0].total,
    pendingRows: rows[0].pending,
    dueIndexMb: round(Number(rows[0].due_index_bytes) / 2 ** 20, 1),
    tableMb: round(Number(rows[0].table_bytes) / 2 ** 20, 1),
    fillSeconds: round(s.fillSeconds, 1),
    runs: times.length,
    claimedPerRun,
    runsClaimingOtherwise: claimedWrong,
    latencyMs: summarise(times),
    machineCoresDuring: round(machineCores, 2),
    plan,
  };
}
