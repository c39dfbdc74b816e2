import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './service-process.js';

/**
 * A nats-server with JetStream of a test's own (its own port and store), for tests that stop and
 * start the broker: the machine's shared one must stay up for every other test.
 */
export class PrivateNatsServer {
  private child?: ChildProcess;
  private readonly storeDir = mkdtempSync(join(tmpdir(), 'byrd-nats-'));

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts it again on the same port and store (the streams and KV buckets are kept). */
  async start(): Promise<void> {
    const binary = ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find(
      (candidate) => spawnSync(candidate, ['--version']).status === 0,
    );
    if (!binary) throw new Error('nats-server is not installed (apt-get install -y nats-server)');
    this.child = spawn(binary, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], {
      stdio: 'ignore',
    });
    const child = this.child;
    const deadline = Date.now() + 15_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null)
        throw new Error(`nats-server exited (${child.exitCode}) on port ${this.port}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${this.port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // One that exits now found its port taken meanwhile: what answers there is not ours.
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (child.exitCode !== null)
      throw new Error(`nats-server exited (${child.exitCode}) on port ${this.port}`);
  }

  /** SIGTERM, as a pod deletion does, and waits until the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }

  /**
   * Stops the broker and deletes the consumers of a stream from its store before it starts again,
   * as a failover to a node that never had them does (a watch's ephemeral consumer lived on one node).
   */
  async restartWithoutConsumersOf(stream: string): Promise<void> {
    await this.stop();
    rmSync(join(this.storeDir, 'jetstream', '$G', 'streams', stream, 'obs'), {
      recursive: true,
      force: true,
    });
    await this.start();
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
