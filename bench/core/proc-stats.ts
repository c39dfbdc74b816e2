// Memory and CPU of processes, from /proc (Linux): VmRSS/VmHWM of a pid, CPU time of a pid or of
// every process with a given name (postgres backends, nats-server), and a sampler of peak RSS.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { note, paint, round } from './util.js';

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** { rssMb, hwmMb } of a live pid (MiB), or null when it is gone. */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** User+system CPU seconds a pid has used so far (0 when it is gone). */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return 0;
  }
}

/** { busy, iowait, steal } CPU seconds of the whole machine since boot (/proc/stat, all cores). */
export function machineCpuSeconds() {
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const tps = ticksPerSecond();
  return {
    busy: (user + nice + system + irq + softirq) / tps,
    iowait: iowait / tps,
    steal: steal / tps,
    idle: idle / tps,
  };
}

/** Cores the whole machine kept busy over `ms` milliseconds (to notice other work before a run). */
export async function machineBusyCores(ms = 1000): Promise<number> {
  const before = machineCpuSeconds();
  await new Promise((done) => setTimeout(done, ms));
  const after = machineCpuSeconds();
  return (after.busy - before.busy) / (ms / 1000);
}

/**
 * Waits (at most `seconds`) until the machine is quiet: under `threshold` busy cores over one second.
 * Says what it waits for; answers the busy cores last measured.
 */
export async function waitForQuietMachine(seconds: number, threshold = 0.25): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let busy = await machineBusyCores(1000);
  if (busy < threshold) return busy;
  note(`waiting for the machine to quieten (${round(busy, 2)} cores busy with other work)`);
  while (Date.now() < deadline) {
    busy = await machineBusyCores(1000);
    if (busy < threshold) return busy;
  }
  note(
    paint(
      '1;33',
      `still ${round(busy, 2)} cores busy after ${seconds} s; measuring anyway (numbers will be noisy)`,
    ),
  );
  return busy;
}

/**
 * What a CPU snapshot measures, by label: a pid, a list of pids, 'self' (this process), 'machine'
 * (every core) or { comm } (every process of that name).
 */
export type CpuGroups = Record<string, number | number[] | 'self' | 'machine' | { comm: string }>;

export interface CpuSnapshot {
  at: bigint;
  cpu: Record<string, Map<number | string, number>>;
}

/** CPU seconds and cores (CPU s per wall s) of each group between two snapshots. */
export interface CpuWindow {
  wallSeconds: number;
  groups: Record<string, { cpuSeconds: number; cores: number }>;
}

/** Pids whose command name (/proc/<pid>/comm) is `name`. */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * CPU seconds per pid of named groups at one instant. `groups` maps a label to a pid, a list of
 * pids, 'self' (this process), or { comm } (every process of that name, re-listed at each snapshot
 * so backends started in between are counted from zero; a process that exits between two snapshots
 * loses the time it used in between, e.g. a short autovacuum worker).
 */
export function cpuSnapshot(groups: CpuGroups): CpuSnapshot {
  const snapshot: CpuSnapshot = { at: process.hrtime.bigint(), cpu: {} };
  for (const [label, target] of Object.entries(groups)) {
    if (target === 'self') {
      const { user, system } = process.cpuUsage();
      snapshot.cpu[label] = new Map<string, number>([['self', (user + system) / 1e6]]);
      continue;
    }
    if (target === 'machine') {
      const { busy, steal } = machineCpuSeconds();
      snapshot.cpu[label] = new Map<string, number>([['busy', busy]]);
      snapshot.cpu[`${label} steal`] = new Map<string, number>([['steal', steal]]);
      continue;
    }
    const pids =
      typeof target === 'number' ? [target] : Array.isArray(target) ? target : pidsNamed(target.comm);
    snapshot.cpu[label] = new Map<number, number>(pids.map((pid) => [pid, cpuSecondsOf(pid)]));
  }
  return snapshot;
}

/** { wallSeconds, groups: { label: { cpuSeconds, cores } } } between two snapshots (cores = CPU s per wall s). */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuWindow {
  const wall = Number(after.at - before.at) / 1e9;
  const result: CpuWindow = { wallSeconds: wall, groups: {} };
  for (const [label, pids] of Object.entries(after.cpu)) {
    let seconds = 0;
    for (const [pid, now] of pids) seconds += Math.max(0, now - (before.cpu[label]?.get(pid) ?? 0));
    result.groups[label] = { cpuSeconds: seconds, cores: wall > 0 ? seconds / wall : 0 };
  }
  return result;
}

/** Samples VmRSS of some pids every `intervalMs`; stop() answers { label: peakRssMb }. */
export function sampleRss(
  pids: Record<string, number>,
  intervalMs = 200,
): { stop(): Record<string, number> } {
  const peaks: Record<string, number> = {};
  const take = () => {
    for (const [label, pid] of Object.entries(pids)) {
      const memory = memoryOf(pid);
      if (memory && !(memory.rssMb <= (peaks[label] ?? 0))) peaks[label] = memory.rssMb;
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peaks;
    },
  };
}

/** Cores that processes outside `measured` (the run's own groups) kept busy during a window. */
export function otherCores(cpu: CpuWindow, measured: string[]): number {
  const ours = measured.reduce((sum, label) => sum + (cpu.groups[label]?.cores ?? 0), 0);
  return Math.max(0, (cpu.groups.machine?.cores ?? 0) - ours);
}
