// Child processes of a benchmark run: each one's output goes to its own log file, an unexpected
// exit is noticed, and `stopAll` ends exactly the processes this run started (by pid, SIGTERM then
// SIGKILL after a grace period). A process-exit hook SIGKILLs whatever is left if the run dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, fail, sleep } from './util.js';

const STOP_GRACE_MS = 15_000;
const live = new Set<Managed>();

process.on('exit', () => {
  for (const managed of live) {
    try {
      process.kill(managed.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A process of the run. */
export interface Managed {
  name: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
  exited: Promise<Exit>;
  alive(): boolean;
  stopRequested: boolean;
}

export interface StartOptions {
  env?: Record<string, string>;
  args?: string[];
  nodeArgs?: string[];
  cwd?: string;
}

export class ProcessGroup {
  private readonly processes: Managed[] = [];
  private stopping = false;
  /** Called when a process exits before stopAll. */
  onUnexpectedExit: ((managed: Managed, exit: Exit) => void) | null = null;

  /** @param logDir where each process's stdout+stderr is written (<name>.log) */
  constructor(readonly logDir: string) {}

  /** Starts `node [nodeArgs] script [args]`. */
  startNode(
    name: string,
    script: string,
    { env = {}, args = [], nodeArgs = [], cwd = ROOT }: StartOptions = {},
  ) {
    const logFile = join(this.logDir, `${name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    let exit: Exit | undefined;
    const managed: Managed = {
      name,
      pid: child.pid ?? fail(`${name} could not be started.`),
      child,
      logFile,
      stopRequested: false,
      alive: () => exit === undefined,
      exited: new Promise<Exit>((resolveExit) => {
        child.once('close', (code, signal) => {
          exit = { code, signal };
          live.delete(managed);
          log.end();
          resolveExit(exit);
          if (!this.stopping && !managed.stopRequested) this.onUnexpectedExit?.(managed, exit);
        });
        child.once('error', (error) => log.write(`could not start: ${error.message}\n`));
      }),
    };
    live.add(managed);
    this.processes.push(managed);
    return managed;
  }

  /** Runs a node script to completion (migrations); fails with its output when it exits non-zero. */
  async runNode(
    name: string,
    script: string,
    { env = {}, cwd = ROOT }: StartOptions = {},
    timeoutMs = 120_000,
  ) {
    const managed = this.startNode(name, script, { env, cwd });
    managed.stopRequested = true; // its exit is expected
    const timer = setTimeout(() => void this.stop(managed), timeoutMs);
    const { code, signal } = await managed.exited;
    clearTimeout(timer);
    if (code !== 0)
      fail(
        `${name} failed (${signal ? `killed by ${signal}` : `exit code ${code}`}):\n${tail(managed.logFile)}`,
      );
    return readFileSync(managed.logFile, 'utf8');
  }

  async stop(managed: Managed, graceMs = STOP_GRACE_MS): Promise<Exit> {
    managed.stopRequested = true;
    if (!managed.alive()) return managed.exited;
    try {
      process.kill(managed.pid, 'SIGTERM');
    } catch {
      return managed.exited;
    }
    const stopped = await Promise.race([managed.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!stopped) {
      try {
        process.kill(managed.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return managed.exited;
  }

  /** Stops every process of this group, in reverse start order (edge before services, ...). */
  async stopAll(): Promise<void> {
    this.stopping = true;
    for (const managed of [...this.processes].reverse()) await this.stop(managed);
  }
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}
