// Child processes of a benchmark run: each one's output goes to its own log file, an unexpected
// exit is noticed, and `stopAll` ends exactly the processes this run started (by pid, SIGTERM then
// SIGKILL after a grace period). A process-exit hook SIGKILLs whatever is left if the run dies.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, fail, sleep } from './util.mjs';

const STOP_GRACE_MS = 15_000;
const live = new Set();

process.on('exit', () => {
  for (const managed of live) {
    try {
      process.kill(managed.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export class ProcessGroup {
  /** @param {string} logDir where each process's stdout+stderr is written (<name>.log) */
  constructor(logDir) {
    this.logDir = logDir;
    this.processes = [];
    this.stopping = false;
    /** Called with (managed, code, signal) when a process exits before stopAll. */
    this.onUnexpectedExit = null;
  }

  /** Starts `node [nodeArgs] script [args]`; returns { name, pid, logFile, exited, alive() }. */
  startNode(name, script, { env = {}, args = [], nodeArgs = [], cwd = ROOT } = {}) {
    const logFile = join(this.logDir, `${name}.log`);
    const log = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const managed = { name, pid: child.pid, child, logFile, exitCode: undefined, signal: undefined };
    managed.exited = new Promise((resolveExit) => {
      child.once('close', (code, signal) => {
        managed.exitCode = code;
        managed.signal = signal;
        live.delete(managed);
        log.end();
        resolveExit({ code, signal });
        if (!this.stopping && !managed.stopRequested) this.onUnexpectedExit?.(managed, code, signal);
      });
      child.once('error', (error) => {
        log.write(`could not start: ${error.message}\n`);
      });
    });
    managed.alive = () => managed.exitCode === undefined;
    live.add(managed);
    this.processes.push(managed);
    return managed;
  }

  /** Runs a node script to completion (migrations); fails with its output when it exits non-zero. */
  async runNode(name, script, { env = {}, timeoutMs = 120_000, cwd = ROOT } = {}) {
    const managed = this.startNode(name, script, { env, cwd });
    managed.stopRequested = true; // its exit is expected
    const timer = setTimeout(() => this.stop(managed), timeoutMs);
    const { code, signal } = await managed.exited;
    clearTimeout(timer);
    if (code !== 0) {
      fail(
        `${name} failed (${signal ? `killed by ${signal}` : `exit code ${code}`}):\n${tail(managed.logFile)}`,
      );
    }
    return readFileSync(managed.logFile, 'utf8');
  }

  async stop(managed, graceMs = STOP_GRACE_MS) {
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
  async stopAll() {
    this.stopping = true;
    for (const managed of [...this.processes].reverse()) await this.stop(managed);
  }
}

/** The last lines of a log file, for error messages. */
export function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}
