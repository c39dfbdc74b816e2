// Small helpers every benchmark uses: paths, sleeping, timing, output.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BENCH_DIR = resolve(ROOT, 'bench');
export const RESULTS_DIR = resolve(BENCH_DIR, 'results');

/**
 * Where the code under test lives (apps/, libs/, deploy/): this working tree, or a snapshot of a git
 * revision (--ref). The harness itself (bench/) always runs from this working tree.
 */
export let TARGET_ROOT = ROOT;
/** { ref, commit } when TARGET_ROOT is a snapshot of a revision, else null. */
export let TARGET_REVISION = null;
export function setTargetRoot(dir, revision = null) {
  TARGET_ROOT = dir;
  TARGET_REVISION = revision;
}

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** Thrown for a problem the user can act on: printed as a sentence, no stack trace. */
export class BenchError extends Error {}

export function fail(message) {
  throw new BenchError(message);
}

const USE_COLOUR = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
export const paint = (code, text) => (USE_COLOUR ? `\x1b[${code}m${text}\x1b[0m` : text);

export function step(message) {
  console.log(paint('1;36', `==> ${message}`));
}

export function note(message) {
  console.log(`    ${message}`);
}

/** Polls `check` until it returns a truthy value; returns it, or null after `timeoutMs`. */
export async function pollUntil(check, { timeoutMs, intervalMs = 100 }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) return null;
    await sleep(intervalMs);
  }
}

export const round = (value, digits = 0) =>
  value == null || Number.isNaN(value) ? null : Number(value.toFixed(digits));

/** A file-name-safe UTC timestamp: 2025-01-31T12-00-00Z. */
export function timestamp(date = new Date()) {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replaceAll(':', '-');
}

/** An option that must be a positive number (the message names the flag). */
export function positiveNumber(name, value) {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) fail(`--${name} must be a positive number, got "${value}".`);
  return number;
}

/** `--service-env KEY=VALUE` values (repeatable) as an environment object. */
export function serviceEnvOf(pairs = []) {
  return Object.fromEntries(
    (Array.isArray(pairs) ? pairs : [pairs]).map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) fail(`--service-env takes KEY=VALUE, got "${pair}".`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** The p-th percentile (nearest rank) of ascending `sorted`, null when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The database name of a postgres:// URL. */
export const dbName = (url) => new URL(url).pathname.slice(1);

/** The commit measured and whether apps/ or libs/ had uncommitted changes; null outside git. */
export function gitState() {
  try {
    const git = (...args) =>
      execFileSync('git', args, {
        cwd: TARGET_ROOT,
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
