// The webhooks benchmark's result: each phase with CPU per delivery and the stage that held it back,
// and the goals of issues 5 and 17.
import { describeCommits } from '../core/commit-probe.js';
import { NOISY_CORES, type Goal } from '../core/phase-runner.js';
import { otherCores } from '../core/proc-stats.js';
import { GOAL_SERVICE_RSS_MB } from '../core/report.js';
import { round, roundAll } from '../core/util.js';
import { SMALL_FUTURE_ROWS, type ClaimResult } from './claim.js';
import type { NoisyPhase } from './phases.js';
import type { Delivery, DeliveryPhase } from './window.js';

const GOAL_RPS = 2000;
const GOAL_P99_MS = 100;
const GOAL_CLAIM_RATIO = 1.5;
const GOAL_NOISY_RATE_SHARE = 0.9; // the merchant beside a noisy neighbour gets >= 90 % of its offered rate

export const MEASURED = ['webhook-service', 'receiver', 'postgres', 'nats-server', 'harness'];

/**
 * Which stage held a window back: the fan-out (events become webhook rows; nearly every row is
 * delivered as soon as it exists) or the delivery (rows wait to be delivered).
 */
function limitOf({ fanOut, events }: Delivery): string | null {
  const { createdPerSecond, maxUndelivered } = fanOut;
  if (!createdPerSecond) return null;
  return maxUndelivered <= Math.max(10, events * 0.01)
    ? `fan-out: webhook rows created at ${createdPerSecond}/s, at most ${maxUndelivered} waiting for delivery`
    : `delivery: up to ${maxUndelivered} webhook rows waiting for delivery (created at ${createdPerSecond}/s)`;
}

/** A phase as the JSON file and the report show it. */
export function phaseResult(phase: DeliveryPhase | NoisyPhase) {
  const { name, result, cpu, peakRssMb, db, commits } = phase;
  const perDelivery = (seconds: number) =>
    result.delivered ? round((seconds * 1000) / result.delivered, 3) : null;
  return {
    name,
    ...result,
    noisy: 'noisy' in phase ? phase.noisy : undefined,
    db,
    commits,
    limit: limitOf(result),
    cpu: {
      wallSeconds: round(cpu.wallSeconds, 2),
      otherCores: round(otherCores(cpu, MEASURED), 2) ?? 0,
      cores: Object.fromEntries(Object.entries(cpu.groups).map(([k, v]) => [k, round(v.cores, 3)])),
      msPerDelivery: Object.fromEntries(
        Object.entries(cpu.groups)
          .filter(([k]) => MEASURED.includes(k))
          .map(([k, v]) => [k, perDelivery(v.cpuSeconds)]),
      ),
    },
    peakRssMb: roundAll(peakRssMb),
  };
}

export type PhaseResult = ReturnType<typeof phaseResult>;

const sustained = (p: PhaseResult) => p.complete && p.delivered === p.events;

export function goalsOf(
  phases: PhaseResult[],
  claim: ClaimResult | null,
  serviceHwmMb: number | null,
  s: { rate: number; futureRows: number },
): Goal[] {
  const throughput = phases.find((p) => p.name === 'throughput');
  const paced = phases.find((p) => p.offeredRate && !p.noisy);
  const noisy = phases.find((p) => p.noisy);
  const noisyMachine = phases.some((p) => p.cpu.otherCores > NOISY_CORES);
  const latency = (p: PhaseResult) =>
    `${p.latencyMs.p99} ms (${p.delivered}/${p.events} delivered${sustained(p) ? '' : ', not sustained'};` +
    ` PostgreSQL: ${describeCommits(p.commits)})`;
  const goals: Goal[] = [
    {
      name: 'deliveries/s (throughput phase, first publish to last arrival)',
      actual: throughput ? `${throughput.deliveredPerSecond}/s` : 'not measured',
      target: `>= ${GOAL_RPS}/s`,
      pass: throughput ? throughput.complete && Number(throughput.deliveredPerSecond) >= GOAL_RPS : null,
    },
    {
      name: `p99 event-to-receiver latency at ${paced?.offeredRate ?? s.rate} events/s`,
      actual: paced ? latency(paced) : 'not measured',
      target: `< ${GOAL_P99_MS} ms with every event delivered`,
      pass: paced ? Number(paced.latencyMs.p99) < GOAL_P99_MS && sustained(paced) : null,
    },
  ];
  if (noisy?.noisy && noisy.offeredRate)
    goals.push(
      {
        name: `p99 event-to-receiver latency at ${noisy.offeredRate} events/s beside a noisy neighbour (${noisy.noisy.rows} due, ${noisy.noisy.answer})`,
        actual: latency(noisy),
        target: `< ${GOAL_P99_MS} ms with every event delivered`,
        pass: Number(noisy.latencyMs.p99) < GOAL_P99_MS && sustained(noisy),
      },
      {
        name: 'deliveries/s beside a noisy neighbour',
        actual: `${noisy.deliveredPerSecond}/s of ${noisy.offeredRate}/s offered`,
        target: `>= ${GOAL_NOISY_RATE_SHARE * noisy.offeredRate}/s (${GOAL_NOISY_RATE_SHARE * 100} % of the offered rate)`,
        pass:
          sustained(noisy) && Number(noisy.deliveredPerSecond) >= GOAL_NOISY_RATE_SHARE * noisy.offeredRate,
      },
    );
  goals.push(
    {
      name: `claim latency ratio ${claim?.sizes?.[1]?.futureRows ?? s.futureRows}/${SMALL_FUTURE_ROWS} future retries (p50)`,
      actual: claim?.ratioP50 ?? 'not measured',
      target: `< ${GOAL_CLAIM_RATIO}`,
      pass: claim?.ratioP50 != null ? claim.ratioP50 < GOAL_CLAIM_RATIO : null,
    },
    {
      name: 'peak RSS of the webhook service (issue 17)',
      actual: serviceHwmMb === null ? 'not measured' : `${serviceHwmMb} MB`,
      target: `< ${GOAL_SERVICE_RSS_MB} MB`,
      pass: serviceHwmMb === null ? null : serviceHwmMb < GOAL_SERVICE_RSS_MB,
    },
  );
  return goals.map((goal) => ({ ...goal, noisy: noisyMachine && !goal.name.startsWith('claim') }));
}
