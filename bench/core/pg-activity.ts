// What a database's connections do during a measured window: pg_stat_activity sampled a few times
// a second. Shows whether a pool is the bottleneck (all connections busy), whether an app holds
// transactions open while it does other work ("idle in transaction"), and what busy backends wait
// for (e.g. IO/WALSync = commit flushes, Lock/transactionid = row locks, Client/ClientRead).

// For a connection idle in a transaction, `query` is the statement it ran last: what the app did
// just before it went away to do something else with the transaction still open.
import type pg from 'pg';
import { sampleEvery } from './util.js';

const QUERY = `SELECT state, coalesce(wait_event_type || '/' || wait_event, 'CPU') AS wait,
    CASE WHEN state LIKE 'idle in transaction%' THEN regexp_replace(left(query, 200), '\\s+', ' ', 'g') END AS last,
    count(*)::int AS n
  FROM pg_stat_activity
  WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
    AND application_name <> 'byrd-bench'
  GROUP BY 1, 2, 3`;

interface ActivityRow {
  state: string | null;
  wait: string;
  last: string | null;
  n: number;
}

/** Connections of a database during a window (averages of the samples). */
export interface DbActivity {
  samples: number;
  connections: Record<'total' | 'active' | 'idleInTransaction' | 'idle', number>;
  activeWaits: Record<string, number>;
  idleInTransactionAfter: Record<string, number>;
}

/** Counters of each table (seq_scan, seq_tup_read, idx_scan, ins, upd, del). */
export type TableStats = Record<string, Record<string, number>>;

/** A short name for a statement: its verb and table ("INSERT transactions", "SELECT outbox", "START TRANSACTION"). */
export function statementKind(sql: string | null): string {
  if (!sql) return '?';
  const text = sql.trim().replace(/"/g, '');
  const verb = text.split(/\s+/, 1)[0].toUpperCase();
  if (verb === 'START' || verb === 'BEGIN') return 'BEGIN';
  const table = /\b(?:INTO|FROM|UPDATE)\s+([A-Za-z_][\w.]*)/i.exec(text)?.[1] ?? '';
  return `${verb} ${table}`.trim();
}

/**
 * Samples connections of `database` every `intervalMs` through `pool` (a pool of this harness, whose
 * own connections are left out). stop() answers
 * { samples, connections: { total, active, idleInTransaction, idle } (averages), activeWaits: { wait: average },
 *   idleInTransactionAfter: { statement kind: average } }.
 */
export function sampleDbActivity(
  pool: pg.Pool,
  database: string,
  intervalMs = 250,
): { stop(): Promise<DbActivity> } {
  const samples: ActivityRow[][] = [];
  const sampling = sampleEvery(intervalMs, async () => {
    samples.push((await pool.query<ActivityRow>(QUERY, [database])).rows);
  });
  return {
    async stop() {
      await sampling.stop();
      const n = samples.length || 1;
      const sum = { total: 0, active: 0, idleInTransaction: 0, idle: 0 };
      const waits: Record<string, number> = {};
      const idleAfter: Record<string, number> = {};
      for (const rows of samples) {
        for (const { state, wait, last, n: count } of rows) {
          sum.total += count;
          if (state === 'active') {
            sum.active += count;
            waits[wait] = (waits[wait] ?? 0) + count;
          } else if (state?.startsWith('idle in transaction')) {
            sum.idleInTransaction += count;
            const kind = statementKind(last);
            idleAfter[kind] = (idleAfter[kind] ?? 0) + count;
          } else if (state === 'idle') sum.idle += count;
        }
      }
      const average = (value: number) => Number((value / n).toFixed(2));
      return {
        samples: samples.length,
        connections: {
          total: average(sum.total),
          active: average(sum.active),
          idleInTransaction: average(sum.idleInTransaction),
          idle: average(sum.idle),
        },
        activeWaits: Object.fromEntries(
          Object.entries(waits)
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => [k, average(v)]),
        ),
        idleInTransactionAfter: Object.fromEntries(
          Object.entries(idleAfter)
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => [k, average(v)]),
        ),
      };
    },
  };
}

/** Per-table counters of one database (pg_stat_user_tables), to diff around a window. */
export async function tableStats(pool: pg.Pool): Promise<TableStats> {
  const { rows } = await pool.query<Record<string, string>>(
    `SELECT relname, seq_scan::bigint AS seq_scan, seq_tup_read::bigint AS seq_tup_read,
       coalesce(idx_scan, 0)::bigint AS idx_scan, n_tup_ins::bigint AS ins, n_tup_upd::bigint AS upd,
       n_tup_del::bigint AS del
     FROM pg_stat_user_tables`,
  );
  return Object.fromEntries(
    rows.map((r) => [
      r.relname,
      Object.fromEntries(
        Object.entries(r)
          .filter(([k]) => k !== 'relname')
          .map(([k, v]) => [k, Number(v)]),
      ),
    ]),
  );
}

/**
 * What happened to each table between two tableStats snapshots (tables with any change). Counters
 * reach pg_stat_user_tables up to a second late, so take the second snapshot a moment after the work.
 */
export function tableStatsBetween(before: TableStats, after: TableStats): TableStats {
  const changes: TableStats = {};
  for (const [table, now] of Object.entries(after)) {
    const then: Record<string, number> = before[table] ?? {};
    const delta = Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (then[k] ?? 0)]));
    if (Object.values(delta).some((v) => v !== 0)) changes[table] = delta;
  }
  return changes;
}

/**
 * The whole server's write-ahead log counters (pg_stat_wal): records, full-page images, bytes and
 * flushes (`wal_sync`: fdatasync calls, each a commit or more waits for). Not per database: diff
 * them around a window in which the run is the server's only writer.
 */
export interface WalStats {
  records: number;
  fullPageImages: number;
  bytes: number;
  flushes: number;
}

export async function walStats(pool: pg.Pool): Promise<WalStats> {
  const { rows } = await pool.query<Record<keyof WalStats, string>>(
    `SELECT wal_records AS records, wal_fpi AS "fullPageImages", wal_bytes AS bytes, wal_sync AS flushes
       FROM pg_stat_wal`,
  );
  const [row] = rows;
  return {
    records: Number(row.records),
    fullPageImages: Number(row.fullPageImages),
    bytes: Number(row.bytes),
    flushes: Number(row.flushes),
  };
}

export function walStatsBetween(before: WalStats, after: WalStats): WalStats {
  return {
    records: after.records - before.records,
    fullPageImages: after.fullPageImages - before.fullPageImages,
    bytes: after.bytes - before.bytes,
    flushes: after.flushes - before.flushes,
  };
}
