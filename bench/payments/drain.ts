// The payments database between windows: the outbox backlog (the relay deletes what JetStream
// acknowledged, so every row left is unpublished), waiting for it and the orders consumer to drain;
// the ledger's row counts.
import type pg from 'pg';
import { countOf } from '../core/environment.js';
import { pollUntil, sampleEvery } from '../core/util.js';
import { PREFILL_MERCHANT } from './prefill.js';

const DRAIN_TIMEOUT_MS = 120_000;

export interface Drain {
  backlogAtEnd: number;
  outboxDrainMs: number | null;
  consumerCaughtUpMs: number | null;
  maxBacklogDuringWindow?: number;
  backlogSamples?: number[];
}

const pendingOutbox = (pool: pg.Pool) => countOf(pool, 'SELECT count(*) AS n FROM outbox');

/**
 * Waits until every outbox row is published and (when given) the orders consumer is idle; answers
 * how long each took from the call (null = not within the limit).
 */
export async function waitForDrain(pool: pg.Pool, consumerIdle?: () => Promise<boolean>): Promise<Drain> {
  const start = performance.now();
  const backlogAtEnd = await pendingOutbox(pool);
  const drained = await pollUntil(async () => (await pendingOutbox(pool)) === 0, {
    timeoutMs: DRAIN_TIMEOUT_MS,
    intervalMs: 25,
  });
  const outboxDrainMs = drained ? performance.now() - start : null;
  let consumerCaughtUpMs = null;
  if (consumerIdle) {
    const idle = await pollUntil(consumerIdle, { timeoutMs: DRAIN_TIMEOUT_MS, intervalMs: 50 });
    consumerCaughtUpMs = idle ? performance.now() - start : null;
  }
  return { backlogAtEnd, outboxDrainMs, consumerCaughtUpMs };
}

/** Unpublished outbox rows, sampled every second during a measured window. */
export function sampleBacklog(pool: pg.Pool) {
  const samples: number[] = [];
  const sampling = sampleEvery(1000, async () => {
    samples.push(await pendingOutbox(pool));
  });
  return {
    async stop() {
      await sampling.stop();
      return { samples, max: samples.length ? Math.max(...samples) : 0 };
    },
  };
}

/** Rows of this run in each table (prefilled history left out). */
export async function countRows(pool: pg.Pool, tables: ('transactions' | 'three_ds_sessions' | 'outbox')[]) {
  const filter = {
    transactions: 'merchant_id <> $1',
    three_ds_sessions: 'merchant_id <> $1',
    outbox: "payload->>'merchantId' <> $1",
  };
  const counts: Record<string, number> = {};
  for (const name of tables)
    counts[name] = await countOf(pool, `SELECT count(*) AS n FROM ${name} WHERE ${filter[name]}`, [
      PREFILL_MERCHANT,
    ]);
  return counts;
}
