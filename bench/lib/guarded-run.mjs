// The frame of a benchmark run: its process group and log folder, and the ways a run stops early
// (a process of the run dying, Ctrl-C, a watchdog past the run's time budget), each rejecting the
// run with a sentence; then, always, its processes stopped and its world cleaned up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, tail } from './processes.mjs';
import { BenchError, ROOT, TARGET_ROOT, note, step } from './util.mjs';

/**
 * Runs `measure({ group, logDir })` for the benchmark `name` and answers what it answers.
 * `cleanup()` runs after the processes are stopped (drop databases, close receivers); the logs are
 * kept when the run failed or with `keepLogs`.
 */
export async function guardedRun({ name, budgetMs, keepLogs, measure, cleanup }) {
  const logDir = mkdtempSync(join(tmpdir(), `byrd-bench-${name}-`));
  const group = new ProcessGroup(logDir);
  let failed = false;

  let abort;
  const aborted = new Promise((_, reject) => (abort = reject));
  aborted.catch(() => undefined);
  group.onUnexpectedExit = (managed, code, signal) =>
    abort(
      new BenchError(
        `${managed.name} exited unexpectedly (${signal ?? `code ${code}`}):\n${tail(managed.logFile)}` +
          (TARGET_ROOT === ROOT
            ? `\n\nIf the working tree is being edited, measure a commit instead: npm run bench -- ${name} --ref HEAD`
            : ''),
      ),
    );
  const onSignal = (signal) =>
    abort(new BenchError(`Interrupted (${signal}); stopping what this run started.`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const watchdog = setTimeout(
    () => abort(new BenchError(`The run took longer than ${Math.round(budgetMs / 1000)} s; stopping it.`)),
    budgetMs,
  ).unref();

  try {
    return await Promise.race([measure({ group, logDir }), aborted]);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    clearTimeout(watchdog);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    step('Stopping and cleaning up');
    await group.stopAll();
    await cleanup?.();
    if (failed || keepLogs) note(`process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}
