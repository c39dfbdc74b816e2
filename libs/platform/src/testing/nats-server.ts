import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsContext } from '../messaging/nats.js';
import { freePort } from './service-process.js';

/**
 * A nats-server with JetStream of a test's own (its own port and store), for tests that stop and
 * start the broker: the machine's shared one must stay up for every other test.
 */
export class PrivateNatsServer {
  private child?: ChildProcess;
  private readonly storeDir = mkdtempSync(join(tmpdir(), 'byrd-nats-'));

  private constructor(
    readonly port: number,
    private readonly flags: readonly string[],
  ) {}

  /** `flags`: more nats-server flags (TLS, a cluster member's name and routes). */
  static async start(flags: readonly string[] = []): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(await freePort(), flags);
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
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir, ...this.flags];
    this.child = spawn(binary, args, { stdio: 'ignore' });
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

/**
 * Three nats-servers of a test's own clustered with JetStream, as the chart's production install
 * expects (streams and buckets with 3 copies): for tests that stop one member. Members are named
 * n1, n2, n3, as stream info's `cluster.leader` names them.
 */
export class PrivateNatsCluster {
  private constructor(readonly members: Map<string, PrivateNatsServer>) {}

  static async start(size = 3): Promise<PrivateNatsCluster> {
    const clusterPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routes = clusterPorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
    const members = new Map<string, PrivateNatsServer>();
    for (const [index, port] of clusterPorts.entries()) {
      const name = `n${index + 1}`;
      const flags = ['-n', name, '--cluster_name', 'byrd-test', '--cluster', `nats://127.0.0.1:${port}`];
      members.set(name, await PrivateNatsServer.start([...flags, '--routes', routes]));
    }
    const cluster = new PrivateNatsCluster(members);
    // A cluster that never gets ready is no test's to remove: stop it here.
    await cluster.ready().catch(async (error: unknown) => {
      await cluster.remove();
      throw error;
    });
    return cluster;
  }

  /**
   * Waits until JetStream places a stream on every member: members answer JetStream's API before
   * they have all joined its meta group ("no suitable peers for placement", or no answer), and
   * after a member stops, until it is back.
   */
  async ready(): Promise<void> {
    const size = this.members.size;
    for (const deadline = Date.now() + 30_000; ; ) {
      const nats = await NatsContext.open({ url: this.url, name: 'cluster-ready' }, '').catch(() => null);
      try {
        if (nats) {
          await nats.jsm.streams.add({ name: 'CLUSTER_READY', subjects: ['cluster.ready'], num_replicas: size });
          await nats.jsm.streams.delete('CLUSTER_READY');
          return;
        }
      } catch (error) {
        if (Date.now() > deadline) throw error;
      } finally {
        await nats?.close();
      }
      if (Date.now() > deadline) throw new Error(`The NATS cluster did not place a stream on ${size} members`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** The first member's address: a client learns the others from it and moves to them when it stops. */
  get url(): string {
    const [first] = this.members.values();
    return first.url;
  }

  /** The member of that name (n1, n2, ...). */
  member(name: string): PrivateNatsServer {
    const member = this.members.get(name);
    if (!member) throw new Error(`No cluster member ${name}`);
    return member;
  }

  async remove(): Promise<void> {
    await Promise.all([...this.members.values()].map((member) => member.remove()));
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
