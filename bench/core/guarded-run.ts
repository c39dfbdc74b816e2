// The frame of a benchmark run: its world (BenchEnvironment), process group and log folder, and the
// ways a run stops early (a process of the run dying, Ctrl-C, a watchdog past the run's time
// budget), each rejecting the run with a sentence; then, always, its processes stopped and its world
// removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchEnvironment } from './environment.js';
import { ProcessGroup, tail } from './processes.js';
import { machineBusyCores } from './proc-stats.js';
import { BenchError, ROOT, note, paint, round, step, target } from './util.js';

/** What a run's measuring function gets. */
export interface RunContext {
  env: BenchEnvironment;
  group: ProcessGroup;
  logDir: string;
  /** Busy cores of the machine in the second before the run. */
  busyBefore: number;
}

/**
 * Runs `measure` for the benchmark `name` in a new world and answers what it answers. `cleanup()`
 * runs after the processes are stopped; the logs are kept when the run failed or with `keepLogs`.
 */
export async function guardedRun<T>({
  name,
  budgetMs,
  keepLogs,
  measure,
  cleanup,
}: {
  name: string;
  budgetMs: number;
  keepLogs: boolean;
  measure: (context: RunContext) => Promise<T>;
  cleanup?: () => Promise<void>;
}): Promise<T> {
  const logDir = mkdtempSync(join(tmpdir(), `byrd-bench-${name}-`));
  const group = new ProcessGroup(logDir);
  const stops = earlyStops(name, group, budgetMs);
  let env: BenchEnvironment | undefined;
  let failed = false;
  const start = async () => {
    step('Environment');
    const busyBefore = await machineBusyCores(1000);
    note(
      `machine: ${cpus().length} cores, ${round(busyBefore, 2)} cores busy before the run` +
        (busyBefore > 0.25 ? paint('1;33', ' (other work is running: results will be noisy)') : ''),
    );
    env = await BenchEnvironment.create();
    note(`run ${env.id}: databases byrd_${env.id}_*, stream ${env.streamName}`);
    return measure({ env, group, logDir, busyBefore });
  };
  try {
    return await Promise.race([start(), stops.aborted]);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    stops.dispose();
    step('Stopping and cleaning up');
    await group.stopAll();
    await cleanup?.();
    if (env) {
      await env.cleanup().catch((error: Error) => note(`cleanup: ${error.message}`));
      note(`dropped databases byrd_${env.id}_* and stream/KV ${env.streamName}, *_${env.id}`);
    }
    if (failed || keepLogs) note(`process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

/**
 * The ways a run stops early, as one promise that rejects with a sentence: a process of the run
 * exiting, Ctrl-C or SIGTERM, the watchdog past `budgetMs`. `dispose()` removes the listeners.
 */
function earlyStops(name: string, group: ProcessGroup, budgetMs: number) {
  let abort: (error: BenchError) => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => (abort = reject));
  aborted.catch(() => undefined);
  group.onUnexpectedExit = (managed, { code, signal }) =>
    abort(
      new BenchError(
        `${managed.name} exited unexpectedly (${signal ?? `code ${code}`}):\n${tail(managed.logFile)}` +
          (target.root === ROOT
            ? `\n\nIf the working tree is being edited, measure a commit instead: npm run bench -- ${name} --ref HEAD`
            : ''),
      ),
    );
  const onSignal = (signal: string) =>
    abort(new BenchError(`Interrupted (${signal}); stopping what this run started.`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const watchdog = setTimeout(
    () => abort(new BenchError(`The run took longer than ${Math.round(budgetMs / 1000)} s; stopping it.`)),
    budgetMs,
  ).unref();
  return {
    aborted,
    dispose() {
      clearTimeout(watchdog);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}
