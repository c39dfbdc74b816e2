// The payments benchmark's report: phases, CPU per request, outbox drains, database connections,
// table work, ledger, memory, CPU profile, ratios and goal lines.
import { printGoals, warnNoisy, type Goal } from '../core/phase-runner.js';
import { table } from '../core/report.js';
import { paint, round } from '../core/util.js';
import type { PaymentsLedger } from './ledger.js';
import type { PaymentsProfile } from './profile.js';
import { MEASURED, type Memory, type PhaseResult, type ratiosOf } from './result.js';

export interface PaymentsReport {
  run: string;
  settings: { connections: number; warmupS: number; durationS: number; poolSize: string | null };
  describe: { service: string; keys: string | null; bare: string; comparison: string };
  machine: { cores: number; node: string };
  phases: PhaseResult[];
  ledger: PaymentsLedger;
  memory: Memory;
  profile: PaymentsProfile | null;
  ratios: ReturnType<typeof ratiosOf>;
  goals: Goal[];
}

export function printReport(r: PaymentsReport): void {
  const s = r.settings;
  console.log(
    `\n${paint('1', 'payments')}  run ${r.run}  ${s.connections} connections, ${s.warmupS} s warm-up + ${s.durationS} s measured per phase, ${r.machine.cores} cores, node ${r.machine.node}`,
  );
  console.log(`service: ${r.describe.service}`);
  if (r.describe.keys) console.log(`keys:    ${r.describe.keys}`);
  console.log(`bare:    ${r.describe.bare} (pool ${s.poolSize ?? '10 (service default)'})`);
  console.log(`compare: ${r.describe.comparison}\n`);
  console.log(
    table(r.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'req/s', value: (p) => round(p.result.rps) },
      { title: 'p50 ms', value: (p) => p.result.latencyMs.p50 },
      { title: 'p99 ms', value: (p) => p.result.latencyMs.p99 },
      { title: 'max ms', value: (p) => p.result.latencyMs.max },
      { title: '2xx', value: (p) => p.result.status['2xx'] },
      { title: 'non-2xx', value: (p) => p.result.status.non2xx },
      { title: 'errors', value: (p) => p.result.errors + p.result.timeouts },
      {
        title: 'peak RSS MB',
        value: (p) => (p.kind === 'service' ? p.peakRssMb.payments : p.peakRssMb.bare),
      },
      { title: 'edge RSS MB', value: (p) => (p.name.includes('edge') ? p.peakRssMb.edge : null) },
      { title: 'slowest commit ms', value: (p) => p.commits?.maxMs ?? null },
    ]),
  );
  printCpu(r.phases);
  printDrains(r.phases);
  printDatabase(r.phases);
  printLedger(r.ledger);
  const m = r.memory;
  console.log(
    `\nPeak RSS (VmHWM, whole life): payments ${m.paymentsHwmMb} MB, orders ${m.ordersHwmMb ?? '-'} MB, edge ${m.edgeHwmMb} MB, bare ${m.bareHwmMb} MB`,
  );
  if (r.profile) printProfile(r.profile);
  console.log(
    `\nratio service/bare req/s: via edge ${r.ratios.viaEdge ?? '-'}, direct ${r.ratios.direct ?? '-'}`,
  );
  console.log(
    `ratio from CPU cost per request (bare sut ms / service sut ms; what the req/s ratio tends to when CPU is the limit,` +
      ` less sensitive to other work on the machine): via edge ${r.ratios.cpuCostViaEdge ?? '-'}, direct ${r.ratios.cpuCostDirect ?? '-'}`,
  );
  printGoals(r.goals);
}

function printCpu(phases: PhaseResult[]): void {
  console.log(
    '\nCPU per request (ms of CPU time per completed request; "sut ms" = all but the load generator;' +
      '\n"ours" = cores used by the processes of the run, "machine" = busy cores of the whole machine,' +
      '\n"other" = the difference: work of other processes)',
  );
  console.log(
    table(phases, [
      { title: 'phase', value: (p) => p.name },
      ...MEASURED.map((label) => ({ title: label, value: (p: PhaseResult) => p.cpu.msPerRequest[label] })),
      { title: 'sut ms', value: (p) => p.cpu.platformMsPerRequest },
      {
        title: 'ours',
        value: (p) =>
          round(
            MEASURED.reduce((sum, l) => sum + (p.cpu.cores[l] ?? 0), 0),
            2,
          ),
      },
      { title: 'machine', value: (p) => p.cpu.cores.machine },
      { title: 'other', value: (p) => p.cpu.otherCores },
    ]),
  );
  warnNoisy(phases);
}

function printDrains(phases: PhaseResult[]): void {
  const drains = phases.filter((p) => p.drain);
  if (!drains.length) return;
  console.log('\nOutbox relay after each service window (backlog = unpublished rows)');
  console.log(
    table(drains, [
      { title: 'phase', value: (p) => p.name },
      { title: 'max backlog in window', value: (p) => p.drain?.maxBacklogDuringWindow },
      { title: 'backlog at end', value: (p) => p.drain?.backlogAtEnd },
      { title: 'drained in ms', value: (p) => p.drain?.outboxDrainMs },
      { title: 'orders caught up in ms', value: (p) => p.drain?.consumerCaughtUpMs },
    ]),
  );
}

const top = (counts: Record<string, number> | undefined, n: number) =>
  Object.entries(counts ?? {})
    .slice(0, n)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');

function printDatabase(phases: PhaseResult[]): void {
  console.log(
    '\nDatabase connections during each window (averages; pool = DATABASE_POOL_SIZE; waits of active backends)',
  );
  console.log(
    table(phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'open', value: (p) => p.db?.connections.total },
      { title: 'active', value: (p) => p.db?.connections.active },
      { title: 'idle in tx', value: (p) => p.db?.connections.idleInTransaction },
      { title: 'idle', value: (p) => p.db?.connections.idle },
      { title: 'idle in tx, after', align: 'left', value: (p) => top(p.db?.idleInTransactionAfter, 5) },
      { title: 'active backends wait on', align: 'left', value: (p) => top(p.db?.activeWaits, 3) },
    ]),
  );
  console.log(
    '\nTable work per phase (pg_stat_user_tables, from the window start until the backlog drained; rows per request)',
  );
  const rows = phases.flatMap((p) =>
    Object.entries(p.tables).map(([name, t]) => ({
      phase: p.name,
      table: name,
      t,
      per: (v: number) => round(v / Math.max(1, p.result.completed), 2),
    })),
  );
  console.log(
    table(rows, [
      { title: 'phase', value: (r) => r.phase },
      { title: 'table', value: (r) => r.table, align: 'left' },
      { title: 'seq scans', value: (r) => r.t.seq_scan },
      { title: 'rows read by seq scans', value: (r) => r.t.seq_tup_read },
      { title: 'per request', value: (r) => r.per(r.t.seq_tup_read) },
      { title: 'ins/req', value: (r) => r.per(r.t.ins) },
      { title: 'upd/req', value: (r) => r.per(r.t.upd) },
      { title: 'del/req', value: (r) => r.per(r.t.del) },
    ]),
  );
  console.log(
    '\nWrite-ahead log per request (pg_stat_wal: the whole server, from the window start until the backlog drained)',
  );
  const perRequest = (p: PhaseResult, v: number) => round(v / Math.max(1, p.result.completed), 2);
  console.log(
    table(phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'records', value: (p) => perRequest(p, p.wal.records) },
      { title: 'full-page images', value: (p) => perRequest(p, p.wal.fullPageImages) },
      { title: 'bytes', value: (p) => round(p.wal.bytes / Math.max(1, p.result.completed)) },
      { title: 'flushes', value: (p) => perRequest(p, p.wal.flushes) },
    ]),
  );
}

function printLedger({ service, bare }: PaymentsLedger): void {
  const verdict = (ok: boolean) => (ok ? paint('1;32', 'OK') : paint('1;31', 'MISMATCH'));
  console.log('\nLedger');
  console.log(
    `  service ${verdict(service.ok)}: ${service.rows.transactions} transactions for ${service.answered2xx} 2xx answers` +
      ` (+ up to ${service.inFlight} in flight when a window closed), ${service.rows.three_ds_sessions} 3DS sessions,` +
      ` ${service.unpublishedOutbox} outbox rows left unpublished, ${service.streamMessages} stream messages,` +
      (service.ordersInbox === null
        ? ' (orders not running)'
        : ` orders consumed all (pending ${service.ordersConsumer?.pending}, unacked ${service.ordersConsumer?.ackPending}; ${service.ordersInbox} with an order)`),
  );
  console.log(
    `  bare    ${verdict(bare.ok)}: ${bare.rows.transactions} transactions for ${bare.answered2xx} 2xx answers` +
      ` (+ up to ${bare.inFlight} in flight), ${bare.rows.outbox} outbox rows (no relay: they stay unpublished)`,
  );
}

function printProfile(p: PaymentsProfile): void {
  console.log(
    `\nCPU profile of payments (${p.file}; ${p.windowed ? 'measured service windows only' : 'whole life'}, ${round(p.busyMs)} ms busy)`,
  );
  console.log(
    'wall-clock samples of the main thread; "socket writes" also hold the time the thread waits for a core after' +
      '\nwaking a peer (postgres, the edge) on a saturated machine: read it as contention, the rest as cost',
  );
  const share = { title: 'self %', value: (r: { share: number }) => round(r.share * 100, 1) };
  console.log(table(p.byLayer, [{ title: 'layer', value: (r) => r.name }, share]));
  console.log('');
  console.log(table(p.byPackage.slice(0, 12), [{ title: 'package', value: (r) => r.name }, share]));
  console.log('');
  console.log(
    table(p.topFunctions.slice(0, 15), [
      { title: 'function', value: (r) => r.name },
      { title: 'where', value: (r) => r.where, align: 'left' },
      share,
    ]),
  );
}
