// Small helpers every benchmark uses: paths, sleeping, timing, output.
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
