// The payments benchmark's phases: service and bare handler through the edge (saturated, then paced
// at `--paced-share` (GOAL_PACED_SHARE) x the bare handler's req/s), then directly; after each service window the outbox
// backlog and the orders consumer are waited for, so no phase inherits another's backlog.
import type pg from 'pg';
import { countOf, settle } from '../core/environment.js';
import { BARE_PREFIX } from '../core/bare-handler.js';
import { offer, type Load, type LoadResult } from '../core/load.js';
import {
  tableStats,
  tableStatsBetween,
  walStats,
  walStatsBetween,
  type TableStats,
  type WalStats,
} from '../core/pg-activity.js';
import { runPhase, type Measured, type Phase, type Probes } from '../core/phase-runner.js';
import { dbName, note, round, sleep } from '../core/util.js';
import { waitForDrain, sampleBacklog, type Drain } from './drain.js';
import type { PaymentsStack } from './stack.js';

/** The share of the bare handler's saturated req/s via the edge at which the p99 goal is judged. */
export const GOAL_PACED_SHARE = 0.6;
export const PACED = 'service via edge, paced';
/** The bare handler at the same paced rate: the latency floor of this machine, for comparison. */
export const BARE_PACED = 'bare via edge, paced';

export type Kind = 'service' | 'bare';

export interface PaymentsWindow {
  kind: Kind;
  url: string;
  rate?: number;
  load: LoadResult;
  drain: Drain | null;
  tables: TableStats;
  /** The server's WAL written from the window's start until its backlog drained. */
  wal: WalStats;
}

/** 2xx answers per side, plus requests still in flight when a window closed (they may commit). */
export type Answered = Record<Kind, { answered2xx: number; inFlight: number }>;

export interface WindowSettings {
  durationS: number;
  warmupS: number;
  connections: number;
  direct: boolean;
  /** The paced phases offer this share of the bare handler's saturated req/s via the edge. */
  pacedShare: number;
  quietWaitS: number;
  idempotencyKey: boolean;
}

export interface WindowPools {
  payments: pg.Pool;
  bare: pg.Pool;
  monitor: pg.Pool;
  /** One connection for the commit probe (core/commit-probe.ts). */
  commits: pg.Pool;
  /** Whether the orders consumer has caught up (undefined without orders). */
  ordersIdle?: () => Promise<boolean>;
}

/** The phases in order: [name, kind, url]. */
function planOf({ edge, payments, bare }: PaymentsStack, direct: boolean): [string, Kind, string][] {
  const service = `${edge.url}/api/v2/payment`;
  const viaEdge = `${edge.url}${BARE_PREFIX}`;
  const plan: [string, Kind, string][] = [
    ['service via edge', 'service', service],
    ['bare via edge', 'bare', viaEdge],
    [PACED, 'service', service],
    [BARE_PACED, 'bare', viaEdge],
  ];
  if (direct)
    plan.push(
      ['service direct', 'service', `${payments.url}/api/v2/payment`],
      ['bare direct', 'bare', `${bare.url}/api/v2/payment`],
    );
  return plan;
}

function probesOf({ edge, payments, bare, orders }: PaymentsStack): Probes {
  return {
    cpu: {
      payments: payments.pid,
      orders: orders ? orders.pid : [],
      edge: edge.pid,
      bare: bare.pid,
      postgres: { comm: 'postgres' },
      'nats-server': { comm: 'nats-server' },
      'load-gen': 'self',
      machine: 'machine',
    },
    rss: {
      payments: payments.pid,
      ...(orders ? { orders: orders.pid } : {}),
      edge: edge.pid,
      bare: bare.pid,
    },
  };
}

/** What every window of a run shares. */
interface Run {
  stack: PaymentsStack;
  s: WindowSettings;
  pools: WindowPools;
  answered: Answered;
  profileWindows: { startUs: number; endUs: number }[];
}

const count = (answered: Answered, kind: Kind, result: LoadResult) => {
  answered[kind].answered2xx += result.status['2xx'];
  answered[kind].inFlight += Math.max(0, result.sent - result.completed);
};

const drainOf = (run: Run) => () => waitForDrain(run.pools.payments, run.pools.ordersIdle);

/**
 * One window: warm-up (then the service's backlog drained), the measured load, then outside the
 * probes the backlog drained again, requests cut off by the window committed, the table work.
 */
function paymentsPhase(run: Run, name: string, kind: Kind, load: Load): Phase<LoadResult, PaymentsWindow> {
  const { s, pools, answered } = run;
  const pool = kind === 'service' ? pools.payments : pools.bare;
  const drain = drainOf(run);
  let backlog: ReturnType<typeof sampleBacklog> | null = null;
  let before: TableStats = {};
  let walBefore: WalStats | null = null;
  return {
    name,
    load: { seconds: s.durationS, warmupSeconds: s.warmupS, connections: s.connections, rate: load.rate },
    detail: load.rate ? `${s.pacedShare} x bare via edge` : undefined,
    warmUp: async () => {
      if (s.warmupS <= 0) return;
      count(answered, kind, await offer({ ...load, seconds: s.warmupS }));
      if (kind === 'service') await drain();
    },
    measure: async () => {
      backlog = kind === 'service' ? sampleBacklog(pools.payments) : null;
      before = await tableStats(pool);
      walBefore = await walStats(pool);
      const startUs = Number(process.hrtime.bigint() / 1000n);
      const result = await offer(load);
      if (kind === 'service')
        run.profileWindows.push({ startUs, endUs: Number(process.hrtime.bigint() / 1000n) });
      return result;
    },
    after: async (result) => {
      const seen = backlog ? await backlog.stop() : null;
      count(answered, kind, result);
      const drained = seen
        ? { ...(await drain()), maxBacklogDuringWindow: seen.max, backlogSamples: seen.samples }
        : null;
      // Requests autocannon dropped at the end of the window may still be committing: let them finish.
      const sql = 'SELECT count(*) AS n FROM transactions WHERE merchant_id = $1';
      await settle(() => countOf(pool, sql, [run.stack.merchant.merchantId]));
      if (kind === 'service') await drain();
      await sleep(1100); // table and WAL counters reach the statistics views up to a second late
      const tables = tableStatsBetween(before, await tableStats(pool));
      const wal = walStatsBetween(walBefore!, await walStats(pool));
      return { kind, url: load.url, rate: load.rate, load: result, drain: drained, tables, wal };
    },
  };
}

export async function runWindows(
  stack: PaymentsStack,
  s: WindowSettings,
  pools: WindowPools,
  request: Pick<Load, 'method' | 'headers' | 'body' | 'uniqueIds'>,
  answered: Answered,
  profileWindows: { startUs: number; endUs: number }[],
): Promise<Measured<PaymentsWindow>[]> {
  const run: Run = { stack, s, pools, answered, profileWindows };
  const probes = probesOf(stack);
  await drainOf(run)();
  const phases: Measured<PaymentsWindow>[] = [];
  for (const [name, kind, url] of planOf(stack, s.direct)) {
    const bareRps = phases.find((phase) => phase.name === 'bare via edge')?.result.load.rps ?? 0;
    const rate = name.endsWith('paced') ? Math.max(1, Math.round(s.pacedShare * bareRps)) : undefined;
    const load: Load = { ...request, url, connections: s.connections, rate, seconds: s.durationS };
    const database = dbName(kind === 'service' ? stack.db.payments : stack.db.bare);
    const db = { pool: pools.monitor, database };
    const phase = await runPhase(
      paymentsPhase(run, name, kind, load),
      { ...probes, db, commits: pools.commits },
      s.quietWaitS,
    );
    phases.push(phase);
    printPhaseLine(phase);
  }
  return phases;
}

const fmtMs = (ms: number | null) => (ms === null ? 'not within the limit' : `${Math.round(ms)} ms`);

function printPhaseLine({ name, result: { load, drain } }: Measured<PaymentsWindow>): void {
  const parts = [
    `${round(load.rps)} req/s`,
    `p50 ${load.latencyMs.p50} ms`,
    `p99 ${load.latencyMs.p99} ms`,
    `2xx ${load.status['2xx']}`,
    `non-2xx ${load.status.non2xx}`,
    `errors ${load.errors}`,
  ];
  if (drain) parts.push(`outbox backlog ${drain.backlogAtEnd} drained in ${fmtMs(drain.outboxDrainMs)}`);
  note(`${name}: ${parts.join(', ')}`);
}
