// The one way every benchmark measures: a run is a list of phases, each with a name, a setup, a load
// shape (rate, duration, connections), a measured window probed the same way every time (CPU of
// each process, peak RSS, database connections) and what it reports; then goals checked over the
// phases, each printed as a PASS/MISS line. A benchmark reports, it never fails CI.
import type pg from 'pg';
import { probeCommits, type CommitLatency } from './commit-probe.js';
import { sampleDbActivity, type DbActivity } from './pg-activity.js';
import {
  cpuBetween,
  cpuSnapshot,
  sampleRss,
  waitForQuietMachine,
  type CpuGroups,
  type CpuWindow,
} from './proc-stats.js';
import { paint, step } from './util.js';

/** The load a phase offers: closed loop at `connections`, paced at `rate`, or a number of events. */
export interface LoadShape {
  seconds?: number;
  warmupSeconds?: number;
  connections?: number;
  rate?: number;
  events?: number;
}

export function describeShape({ seconds, warmupSeconds, connections, rate, events }: LoadShape): string {
  const parts = [
    events !== undefined ? `${events} events` : null,
    seconds !== undefined ? `${warmupSeconds ? `${warmupSeconds} s warm-up + ` : ''}${seconds} s` : null,
    rate !== undefined
      ? `offered ${rate}/s`
      : connections !== undefined
        ? `${connections} connections`
        : null,
  ];
  return parts.filter(Boolean).join(', ');
}

/** What every window is probed for. */
export interface Probes {
  /** CPU seconds of these groups over the window. */
  cpu: CpuGroups;
  /** Peak RSS of these pids, sampled every 200 ms. */
  rss: Record<string, number>;
  /** pg_stat_activity of one database, sampled every 250 ms. */
  db?: { pool: pg.Pool; database: string };
  /** A pool of one connection on a database of the run: PostgreSQL's commit flushes, probed. */
  commits?: pg.Pool;
}

export interface Phase<W, R = W> {
  name: string;
  load: LoadShape;
  /** More words for the header line, after the load shape. */
  detail?: string;
  /** Before the machine is asked to be quiet: build events, insert rows, start a neighbour. */
  setup?: () => Promise<void>;
  /** After the quiet wait, before the window (a warm-up). */
  warmUp?: () => Promise<void>;
  /** The measured window: offers the load, answers its measurements. */
  measure: () => Promise<W>;
  /** After the window, outside the probes: wait for backlogs, count rows; answers the phase's result. */
  after?: (window: W) => Promise<R>;
}

/** A phase's measurements with its probes' readings. */
export interface Measured<R> {
  name: string;
  load: LoadShape;
  result: R;
  cpu: CpuWindow;
  peakRssMb: Record<string, number>;
  db: DbActivity | null;
  /** The commit probe's latencies over the window (null without `Probes.commits`). */
  commits: CommitLatency | null;
}

/** Runs one phase: header, setup, quiet machine, warm-up, the probed window, then what comes after. */
export async function runPhase<W, R = W>(
  phase: Phase<W, R>,
  probes: Probes,
  quietWaitS: number,
): Promise<Measured<R>> {
  step(`${phase.name}: ${[describeShape(phase.load), phase.detail].filter(Boolean).join(', ')}`);
  await phase.setup?.();
  if (quietWaitS > 0) await waitForQuietMachine(quietWaitS);
  await phase.warmUp?.();
  const rss = sampleRss(probes.rss);
  const activity = probes.db ? sampleDbActivity(probes.db.pool, probes.db.database) : null;
  const commitProbe = probes.commits ? await probeCommits(probes.commits) : null;
  const before = cpuSnapshot(probes.cpu);
  const window = await phase.measure();
  const cpu = cpuBetween(before, cpuSnapshot(probes.cpu));
  const peakRssMb = rss.stop();
  const db = activity ? await activity.stop() : null;
  const commits = commitProbe ? await commitProbe.stop() : null;
  const result = phase.after ? await phase.after(window) : (window as unknown as R);
  return { name: phase.name, load: phase.load, result, cpu, peakRssMb, db, commits };
}

/** Cores other processes kept busy, above which a phase's numbers are flagged as noisy. */
export const NOISY_CORES = 0.25;

/** Warns when other processes kept the machine busy during some phases (their figures are noisy). */
export function warnNoisy(phases: { name: string; cpu: { otherCores: number } }[]): void {
  const noisy = phases.filter((p) => p.cpu.otherCores > NOISY_CORES);
  if (noisy.length === 0) return;
  console.log(
    paint(
      '1;33',
      `warning: other processes kept ${Math.max(...noisy.map((p) => p.cpu.otherCores))} cores busy during ${noisy.map((p) => p.name).join(', ')}: those numbers are noisy, run again on a quiet machine`,
    ),
  );
}

/** A goal checked over a run's phases: `pass` null when it could not be evaluated. */
export interface Goal {
  name: string;
  actual: string | number | null;
  target: string;
  pass: boolean | null;
  /** Whether other work on the machine may have bent this figure (flagged on its line). */
  noisy?: boolean;
}

export function goalLine({ name, actual, target, pass, noisy }: Goal): string {
  const verdict = pass === null ? paint('2', 'n/a ') : pass ? paint('1;32', 'PASS') : paint('1;33', 'MISS');
  const flag = noisy ? paint('1;33', '  (noisy: other work ran meanwhile)') : '';
  return `${verdict}  ${name}: ${actual ?? 'not measured'} (goal ${target})${flag}`;
}

export function printGoals(goals: Goal[]): void {
  for (const goal of goals) console.log(goalLine(goal));
}
