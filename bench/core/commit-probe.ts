// PostgreSQL's commit flushes during a window, as any writer of the server sees them: one durable
// one-row commit every PROBE_INTERVAL_MS on a connection of its own. A commit waits for the WAL flush
// (fdatasync), and the WAL is the whole server's: when the storage stalls a flush, every commit of
// the server waits with it, the service's and the bare handler's alike. On the 2-core benchmark
// machine flushes normally take well under a millisecond but now and then take 100–300 ms; a paced
// phase that meets one queues for seconds after it. The probe's slowest commit says whether a
// window met one, so a p99 the storage caused can be told from one the code under test caused.
import type pg from 'pg';
import { percentile, sampleEvery } from './util.js';

const PROBE_INTERVAL_MS = 20;
/** A flush slower than this is a stall: a paced phase's p99 goal is 50 ms. */
export const STALL_MS = 50;
const TABLE = 'bench_commit_probe';

/** The probe's commits of one window. */
export interface CommitLatency {
  commits: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** Commits slower than STALL_MS. */
  stalls: number;
}

/**
 * Starts committing through `pool` (its own connection; the table is made in the pool's database,
 * which the run drops at its end) until stop(), which answers the commits' latencies.
 */
export async function probeCommits(pool: pg.Pool): Promise<{ stop(): Promise<CommitLatency> }> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${TABLE} (id int PRIMARY KEY, n bigint NOT NULL);
     INSERT INTO ${TABLE} VALUES (1, 0) ON CONFLICT DO NOTHING`,
  );
  const latencies: number[] = [];
  const sampling = sampleEvery(PROBE_INTERVAL_MS, async () => {
    const start = performance.now();
    // An update writes WAL, so its commit waits for the flush (synchronous_commit, the default).
    await pool.query(`UPDATE ${TABLE} SET n = n + 1 WHERE id = 1`);
    latencies.push(performance.now() - start);
  });
  return {
    async stop() {
      await sampling.stop();
      const sorted = latencies.sort((a, b) => a - b);
      const ms = (value: number | null) => (value === null ? null : Math.round(value * 10) / 10);
      return {
        commits: sorted.length,
        p50Ms: ms(percentile(sorted, 50)),
        p99Ms: ms(percentile(sorted, 99)),
        maxMs: ms(sorted.at(-1) ?? null),
        stalls: sorted.filter((value) => value > STALL_MS).length,
      };
    },
  };
}

/** A window's commit flushes in words, for a goal line: "slowest commit 306 ms (4 of 480 over 50 ms)". */
export function describeCommits(latency: CommitLatency | null | undefined): string {
  if (!latency || latency.maxMs === null) return 'commits not probed';
  return `slowest commit ${Math.round(latency.maxMs)} ms (${latency.stalls} of ${latency.commits} over ${STALL_MS} ms)`;
}
