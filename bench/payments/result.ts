// The payments benchmark's result: its phases with CPU per request, the ledger, memory, ratios, and
// issue 17's goals.
import { cpus } from 'node:os';
import { sustained, PACED_SHORTFALL } from '../core/paced-load.js';
import { NOISY_CORES, type Goal, type Measured } from '../core/phase-runner.js';
import { otherCores, type CpuWindow } from '../core/proc-stats.js';
import { GOAL_SERVICE_RSS_MB } from '../core/report.js';
import { describeCommits } from '../core/commit-probe.js';
import { round, roundAll } from '../core/util.js';
import { BARE_PACED, GOAL_PACED_SHARE, PACED, type PaymentsWindow } from './windows.js';

const GOAL_RATIO = 0.75;
const GOAL_P99_MS = 50;
/** CPU ms per request of every process under test (service, orders, edge, PostgreSQL, NATS). */
const GOAL_CPU_MS = 0.95;

/** Every process of the run, and those under test (all but the load generator). */
export const MEASURED = ['payments', 'orders', 'bare', 'edge', 'postgres', 'nats-server', 'load-gen'];
const PLATFORM = MEASURED.filter((label) => label !== 'load-gen');

export interface Memory {
  paymentsHwmMb: number | null;
  ordersHwmMb: number | null;
  edgeHwmMb: number | null;
  bareHwmMb: number | null;
}

/** CPU ms per completed request of the processes under test (everything but the load generator). */
function platformMs(cpu: CpuWindow, completed: number): number {
  if (!completed) return NaN;
  return (PLATFORM.reduce((sum, label) => sum + (cpu.groups[label]?.cpuSeconds ?? 0), 0) * 1000) / completed;
}

/** A phase as the JSON file and the report show it. */
export function phaseResult({ name, result: w, cpu, peakRssMb, db, commits }: Measured<PaymentsWindow>) {
  const { completed } = w.load;
  const perRequest = (seconds: number) => (completed ? round((seconds * 1000) / completed, 3) : null);
  return {
    name,
    kind: w.kind,
    url: w.url,
    rate: w.rate,
    result: w.load,
    cpu: {
      wallSeconds: round(cpu.wallSeconds, 2),
      // Busy cores of the whole machine not used by the processes above: other work on the machine.
      otherCores: round(otherCores(cpu, MEASURED), 2) ?? 0,
      cores: Object.fromEntries(Object.entries(cpu.groups).map(([k, v]) => [k, round(v.cores, 3)])),
      msPerRequest: Object.fromEntries(
        Object.entries(cpu.groups).map(([k, v]) => [k, perRequest(v.cpuSeconds)]),
      ),
      // CPU of the system under test per request, and the req/s that cost allows on this machine's
      // cores if nothing else ran: a noise-resistant second opinion.
      platformMsPerRequest: round(platformMs(cpu, completed), 3),
      capacityRps: round((cpus().length * 1000) / platformMs(cpu, completed)),
    },
    peakRssMb: roundAll(peakRssMb),
    db,
    commits,
    tables: w.tables,
    wal: w.wal,
    drain: w.drain && {
      ...w.drain,
      outboxDrainMs: round(w.drain.outboxDrainMs),
      consumerCaughtUpMs: round(w.drain.consumerCaughtUpMs),
    },
  };
}

export type PhaseResult = ReturnType<typeof phaseResult>;

/** Service/bare ratios of req/s and of CPU cost, via the edge and direct. */
export function ratiosOf(phases: PhaseResult[]) {
  const byName = new Map(phases.map((phase) => [phase.name, phase]));
  const ratio = (a: string, b: string) => {
    const [x, y] = [byName.get(a), byName.get(b)];
    return x && y ? x.result.rps / y.result.rps : null;
  };
  const costRatio = (a: string, b: string) => {
    const [x, y] = [byName.get(a), byName.get(b)];
    return x && y ? Number(y.cpu.platformMsPerRequest) / Number(x.cpu.platformMsPerRequest) : null;
  };
  return {
    viaEdge: round(ratio('service via edge', 'bare via edge'), 3),
    direct: round(ratio('service direct', 'bare direct'), 3),
    cpuCostViaEdge: round(costRatio('service via edge', 'bare via edge'), 3),
    cpuCostDirect: round(costRatio('service direct', 'bare direct'), 3),
  };
}

export function goalsOf(phases: PhaseResult[], memory: Memory, pacedShare = GOAL_PACED_SHARE): Goal[] {
  const byName = new Map(phases.map((phase) => [phase.name, phase]));
  const viaEdge = byName.get('service via edge');
  const bareViaEdge = byName.get('bare via edge');
  const edgeRatio = viaEdge && bareViaEdge ? viaEdge.result.rps / bareViaEdge.result.rps : null;
  const paced = byName.get(PACED);
  const barePaced = byName.get(BARE_PACED);
  const pacedSustained = paced ? sustained(paced.result) : false;
  const serviceCpuMs = viaEdge?.cpu.platformMsPerRequest ?? null;
  const noisy = phases.some((p) => p.name.includes('via edge') && p.cpu.otherCores > NOISY_CORES);
  const goals: Goal[] = [
    {
      name: 'throughput ratio service/bare via edge',
      actual: round(edgeRatio, 2),
      target: `>= ${GOAL_RATIO}`,
      pass: edgeRatio !== null && edgeRatio >= GOAL_RATIO,
    },
    {
      name: `p99 latency, service via edge at ${pacedShare} x bare's req/s`,
      actual: paced
        ? `${pacedShare === GOAL_PACED_SHARE ? '' : `not judged (the goal's rate is ${GOAL_PACED_SHARE} x bare): `}` +
          `${paced.result.latencyMs.p99} ms at ${round(paced.result.rps)} req/s (offered ${paced.rate}${pacedSustained ? '' : ', not sustained'}` +
          `${barePaced ? `; the bare handler at the same rate: p99 ${barePaced.result.latencyMs.p99} ms` : ''}` +
          `; PostgreSQL: ${describeCommits(paced.commits)}${barePaced ? `, beside the bare handler ${describeCommits(barePaced.commits)}` : ''})`
        : 'not measured',
      target: `< ${GOAL_P99_MS} ms, >= ${100 * (1 - PACED_SHORTFALL)} % of the offered requests answered 2xx`,
      pass:
        paced && pacedShare === GOAL_PACED_SHARE
          ? Number(paced.result.latencyMs.p99) < GOAL_P99_MS && pacedSustained
          : null,
    },
    {
      name: 'CPU per request, every process under test, service via edge',
      actual:
        serviceCpuMs === null
          ? 'not measured'
          : `${round(serviceCpuMs, 2)} ms (bare ${round(bareViaEdge?.cpu.platformMsPerRequest, 2)} ms)`,
      target: `<= ${GOAL_CPU_MS} ms`,
      pass: serviceCpuMs === null ? null : serviceCpuMs <= GOAL_CPU_MS,
    },
    {
      name: 'peak RSS of each service',
      actual: `payments ${round(memory.paymentsHwmMb)} MB${memory.ordersHwmMb === null ? '' : `, orders ${round(memory.ordersHwmMb)} MB`}`,
      target: `< ${GOAL_SERVICE_RSS_MB} MB`,
      pass:
        memory.paymentsHwmMb === null
          ? null
          : [memory.paymentsHwmMb, memory.ordersHwmMb].every((mb) => mb === null || mb < GOAL_SERVICE_RSS_MB),
    },
  ];
  return goals.map((goal) => ({ ...goal, noisy }));
}

/** What was measured, in words (printed above the tables and kept in the JSON file). */
export function describeRun(s: { withOrders: boolean; idempotencyKey: boolean; bare3dsRow: boolean }) {
  return {
    body: 'POST /api/v2/payment {type card, amount "25.00" EUR, card 5448280000000007}',
    service: `apps/payments/dist/main.js${s.withOrders ? ' (+ apps/orders consuming transaction.>)' : ' alone (--no-orders: nobody consumes its events)'}, LOG_LEVEL=warn, NODE_ENV=production`,
    keys: s.idempotencyKey
      ? 'a unique idempotency-key per request (service stores it; bare ignores it)'
      : null,
    bare: `bench/core/bare-payments-server.ts: Fastify + pg, BEGIN; INSERT transactions;${s.bare3dsRow ? ' INSERT three_ds_sessions;' : ''} INSERT outbox; COMMIT`,
    comparison:
      'headline ratio = service via edge / bare via edge (same edge process, so the proxy cost is on both sides); direct ratio without the edge',
    edge: 'deploy/local/edge.mjs, LOG_LEVEL=silent (no per-request access line)',
  };
}
