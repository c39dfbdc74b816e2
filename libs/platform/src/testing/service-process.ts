import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process printed, stdout and stderr. */
  output: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: () => Promise<number | null>;
}

/**
 * Runs a built service (`node dist/main.js`) as its own process, as in production, and waits until
 * `/health/ready` answers. `env` must carry HTTP_PORT. The deadline only bounds a hang: a start takes
 * 2-5 s on a quiet machine, but beside the other suites' services and Chromium on two cores one took
 * over 20 s (its logs are buffered until Nest is up, so it printed nothing).
 */
export async function startServiceProcess(
  main: string,
  env: Record<string, string>,
  timeoutMs = 45_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
  child.stderr.on('data', (c: Buffer) => chunks.push(c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${env.HTTP_PORT}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${main} exited with ${child.exitCode}: ${chunks.join('')}`);
    const ready = await fetch(`${url}/health/ready`).catch(() => null);
    if (ready?.status === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${main} never became ready: ${chunks.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => chunks.join(''), exited: () => exit };
}
