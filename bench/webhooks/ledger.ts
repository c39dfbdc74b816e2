// The webhooks benchmark's ledger, after the delivery phases: published (+ inserted) = succeeded +
// pending + failed rows of the bench merchant, one row per event and none canceled, every noisy row
// still pending or failed, the receiver saw exactly the succeeded webhook ids, every arrival belongs
// to an event of the run, the stream holds every published event, the fan-out consumer drained.
// Any mismatch makes the run VOID (exit code 1).
import type pg from 'pg';
import { countOf, type BenchEnvironment } from '../core/environment.js';
import { note, paint, pollUntil } from '../core/util.js';
import type { Publisher } from './events.js';
import type { NoisyNeighbour, WebhooksStack } from './stack.js';

const DURABLE = 'webhooks-transactions';

export interface NoisyState {
  pending: number;
  failed: number;
  other: number;
  inFlight: number;
  attempts: number;
  circuit: string;
}

/** Where the noisy endpoint's webhooks and circuit stand (the circuit as the service's metrics say). */
export async function noisyState(pool: pg.Pool, serviceUrl: string, settingsId: string): Promise<NoisyState> {
  const { rows } = await pool.query<Omit<NoisyState, 'circuit'>>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
       count(*) FILTER (WHERE status = 'failed')::int AS failed,
       count(*) FILTER (WHERE status NOT IN ('pending', 'failed'))::int AS other,
       count(*) FILTER (WHERE status = 'pending' AND lease_until > now())::int AS "inFlight",
       coalesce(sum(attempt_count), 0)::int AS attempts
     FROM webhooks WHERE settings_id = $1`,
    [settingsId],
  );
  const metrics = await fetch(`${serviceUrl}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const open = /^webhook_endpoint_circuits_open (\d+)/m.exec(metrics);
  return { ...rows[0], circuit: open ? (open[1] === '0' ? 'closed' : 'open') : 'n/a' };
}

interface Settled {
  succeeded: number;
  pending: number;
  leased: number;
  failed: number;
  canceled: number;
  total: number;
}

/** The bench merchant's rows once nothing is leased and the pending count stopped moving. */
async function settledRows(pool: pg.Pool, settingsId: string): Promise<Settled> {
  let settled: Settled | null = null;
  let previous: string | null = null;
  await pollUntil(
    async () => {
      const { rows } = await pool.query<Settled>(
        `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status = 'pending')::int AS pending,
           count(*) FILTER (WHERE status = 'pending' AND lease_token IS NOT NULL)::int AS leased,
           count(*) FILTER (WHERE status = 'failed')::int AS failed,
           count(*) FILTER (WHERE status = 'canceled')::int AS canceled,
           count(*)::int AS total
         FROM webhooks WHERE settings_id = $1`,
        [settingsId],
      );
      settled = rows[0];
      const same = previous === JSON.stringify(settled);
      previous = JSON.stringify(settled);
      return settled.leased === 0 && (settled.pending === 0 || same);
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  return settled!;
}

export async function checkLedger(
  env: BenchEnvironment,
  stack: WebhooksStack,
  publisher: Publisher,
  pool: pg.Pool,
  noisy: NoisyNeighbour | null,
  noisyRowsAsked: number,
) {
  const { receiver } = stack;
  const expected = publisher.sentAt.size; // one webhook per published event, plus the inserted rows
  const publishedCount = expected - publisher.injected.size;
  // Everything published has been handed to the fan-out, and what was claimed has been recorded.
  const consumerIdle = await pollUntil(() => env.consumerIdle(DURABLE), {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const settled = await settledRows(pool, stack.settingsId);
  const attempts = await countOf(pool, 'SELECT count(*) AS n FROM webhook_attempts');
  const deadLetters = await countOf(pool, 'SELECT count(*) AS n FROM dead_letters').catch(() => NaN);
  const stream = await env.streamState();
  const backlog = await env.consumerBacklog(DURABLE);
  const arrivals = await receiver.arrivals();
  const { requests } = await receiver.count();
  const ids = new Set(arrivals.map(([, id]) => id));
  const keys = new Set(arrivals.map(([key]) => key));
  const unknown = arrivals.filter(([key]) => key === null || !publisher.sentAt.has(key)).length;
  const noisyRows = noisy ? await noisyState(pool, stack.service.url, noisy.settingsId) : null;
  const checks: Record<string, boolean> = {
    'published (+ inserted) = succeeded + pending + failed':
      expected === settled.succeeded + settled.pending + settled.failed,
    'one webhook row per published event': settled.total === expected && settled.canceled === 0,
    'receiver saw each succeeded webhook id once or more': ids.size === settled.succeeded,
    'every arrival belongs to a published event': unknown === 0 && keys.size === ids.size,
    'stream holds every published event': stream.messages === publishedCount,
    'fan-out consumer drained': Boolean(consumerIdle),
  };
  if (noisy && noisyRows)
    checks['noisy endpoint: every inserted webhook still pending or failed (none lost)'] =
      noisyRows.pending + noisyRows.failed === noisy.inserted &&
      noisyRows.other === 0 &&
      noisy.inserted === noisyRowsAsked;
  return {
    published: publishedCount,
    inserted: publisher.injected.size,
    publishErrors: publisher.errors.length,
    publishErrorSamples: publisher.errors.slice(0, 3),
    streamMessages: stream.messages,
    rows: settled,
    attempts,
    deadLetters,
    noisy: noisy && noisyRows && { inserted: noisy.inserted, ...noisyRows },
    consumer: backlog,
    receiver: {
      requests,
      distinctIds: ids.size,
      distinctEvents: keys.size,
      duplicates: requests - ids.size,
      unknown,
    },
    checks,
    ok: Object.values(checks).every(Boolean),
  };
}

export type WebhooksLedger = Awaited<ReturnType<typeof checkLedger>>;

export function printLedger(ledger: WebhooksLedger): void {
  const verdict = ledger.ok ? paint('1;32', 'OK') : paint('1;31', 'VOID');
  const { rows, receiver, noisy } = ledger;
  console.log(
    `    ${verdict}: published ${ledger.published}${ledger.inserted ? ` + inserted ${ledger.inserted}` : ''} = succeeded ${rows.succeeded} + pending ${rows.pending} + failed ${rows.failed}` +
      ` (${rows.total} webhook rows, ${rows.canceled} canceled); receiver: ${receiver.distinctIds} distinct webhook ids in ${receiver.requests} requests` +
      ` (${receiver.duplicates} duplicates, ${receiver.unknown} unknown); ${ledger.attempts} attempts recorded; stream ${ledger.streamMessages} messages;` +
      ` consumer pending ${ledger.consumer?.pending}, unacked ${ledger.consumer?.ackPending}; dead letters ${ledger.deadLetters}` +
      (noisy
        ? `; noisy endpoint: inserted ${noisy.inserted} = pending ${noisy.pending} + failed ${noisy.failed} (${noisy.attempts} attempts, circuit ${noisy.circuit})`
        : '') +
      (ledger.publishErrors ? `; ${ledger.publishErrors} publishes failed` : ''),
  );
  for (const [name, ok] of Object.entries(ledger.checks)) if (!ok) note(paint('1;31', `failed: ${name}`));
}
