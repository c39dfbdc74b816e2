// Small helpers every benchmark uses: paths, sleeping, timing, output.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs compiled from bench/dist/core/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const BENCH_DIR = resolve(ROOT, 'bench');
export const RESULTS_DIR = resolve(BENCH_DIR, 'results');
/** Where the compiled harness lives: child processes of a run (bare handler, receivers) start from here. */
export const BENCH_DIST = resolve(BENCH_DIR, 'dist');

export interface Revision {
  ref: string;
  commit: string;
}

/**
 * Where the code under test lives (apps/, libs/, deploy/): this working tree, or a snapshot of a git
 * revision (--ref). The harness itself (bench/) always runs from this working tree.
 */
export const target: { root: string; revision: Revision | null } = { root: ROOT, revision: null };

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Runs `sample` now and then every `intervalMs` until stop(), which ends the wait in progress and
 * resolves once the sample in progress (if any) is done. A sample that throws is skipped: a lost
 * sample is not worth failing a run.
 */
export function sampleEvery(intervalMs: number, sample: () => Promise<unknown>): { stop(): Promise<void> } {
  let stopped = false;
  let wake: () => void = () => {};
  const loop = (async () => {
    while (!stopped) {
      await sample().catch(() => undefined);
      if (stopped) break;
      await new Promise<void>((done) => {
        wake = done;
        setTimeout(done, intervalMs);
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}

/** Thrown for a problem the user can act on: printed as a sentence, no stack trace. */
export class BenchError extends Error {}

export function fail(message: string): never {
  throw new BenchError(message);
}

const USE_COLOUR = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
export const paint = (code: string, text: string) => (USE_COLOUR ? `\x1b[${code}m${text}\x1b[0m` : text);

export function step(message: string): void {
  console.log(paint('1;36', `==> ${message}`));
}

export function note(message: string): void {
  console.log(`    ${message}`);
}

/** Polls `check` until it returns a truthy value; returns it, or null after `timeoutMs`. */
export async function pollUntil<T>(
  check: () => Promise<T> | T,
  { timeoutMs, intervalMs = 100 }: { timeoutMs: number; intervalMs?: number },
): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) return null;
    await sleep(intervalMs);
  }
}

export const round = (value: number | null | undefined, digits = 0): number | null =>
  value == null || Number.isNaN(value) ? null : Number(value.toFixed(digits));

/** Rounds every value of a record (figures for the JSON file). */
export const roundAll = (record: Record<string, number>, digits = 1) =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, round(value, digits)]));

/** A file-name-safe UTC timestamp: 2025-01-31T12-00-00Z. */
export function timestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replaceAll(':', '-');
}

/** An option that must be a positive number (the message names the flag). */
export function positiveNumber(name: string, value: unknown): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    fail(`--${name} must be a positive number, got "${String(value)}".`);
  return number;
}

/** A whole number of at least zero (0 for anything else), as --warmup, --prefill and --quiet-wait take. */
export const atLeastZero = (value: unknown) => Math.max(0, Number(value) || 0);

/** `--service-env KEY=VALUE` values (repeatable) as an environment object. */
export function serviceEnvOf(pairs: string[] = []): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) fail(`--service-env takes KEY=VALUE, got "${pair}".`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** The p-th percentile (nearest rank) of ascending `sorted`, null when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface Summary {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Count, percentiles, max and mean of some values (ms), to two decimals. */
export function summarise(values: number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50), 2),
    p90: round(percentile(sorted, 90), 2),
    p99: round(percentile(sorted, 99), 2),
    max: round(sorted.length ? sorted[sorted.length - 1] : null, 2),
    mean: round(mean, 2),
  };
}

/** The database name of a postgres:// URL. */
export const dbName = (url: string) => new URL(url).pathname.slice(1);

/** The commit measured and whether apps/ or libs/ had uncommitted changes; null outside git. */
export function gitState(): Record<string, unknown> | null {
  if (target.revision) return { ...target.revision, snapshot: true };
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: target.root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      dirtyAppsOrLibs: git('status', '--porcelain', '--', 'apps', 'libs').length > 0,
    };
  } catch {
    return null;
  }
}

/**
 * A card expiry (MM/YY), December three years after today: services check expiry on the real clock,
 * so a fixed date would start failing the day it passed. The bench's own rather than the tests'
 * futureExpiry() of @byrd/platform/testing: `--ref` measures revisions whose platform predates it.
 */
export function futureExpiry(now = new Date()): string {
  const year = String((now.getUTCFullYear() + 3) % 100).padStart(2, '0');
  return `12/${year}`;
}
