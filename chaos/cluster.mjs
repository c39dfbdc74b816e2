// Two replicas of every service, as a Kubernetes Deployment would run them: each replica its own
// process on its own port, restarted after it dies (killed or crashed), and a Service in front (a
// TCP balancer that hands each new connection to the next replica whose readiness probe passes).
// The edge routes to the balancers. Deaths nobody asked for are counted: they are findings.
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { serviceProcessEnv } from '@byrd/deploy/node-options.mjs';
import { freePort, httpStatus } from './lib/net.mjs';
import { serviceMain } from './lib/stack.mjs';
import { TARGET_ROOT, pollUntil, sleep } from './lib/util.mjs';

const PROBE_INTERVAL_MS = 500;
const RESTART_DELAY_MS = 1_000;

export class Replica {
  constructor(group, service, index, env) {
    this.group = group;
    this.service = service;
    this.name = `${service}-${index}`;
    this.env = env;
    this.port = 0;
    this.ready = false;
    this.process = null;
    this.expectedDeath = false;
    this.crashes = []; // { at, code, signal }
  }

  async start() {
    this.port ||= await freePort();
    this.expectedDeath = false;
    this.process = this.group.startNode(this.name, serviceMain(this.service), {
      env: { ...serviceProcessEnv(''), ...this.env, HTTP_PORT: String(this.port) },
      cwd: join(TARGET_ROOT, 'apps', this.service),
    });
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** kill -9, as the OOM killer or a node failure would; the supervisor restarts it. */
  kill() {
    this.expectedDeath = true;
    this.ready = false;
    this.#signal('SIGKILL');
  }

  /**
   * SIGSTOP: the process stays, holding its sockets, but runs nothing, as in a long GC pause, a
   * frozen VM or a throttled container; its leases run out meanwhile. resume() sends SIGCONT.
   */
  pause() {
    this.#signal('SIGSTOP');
  }

  resume() {
    this.#signal('SIGCONT');
  }

  #signal(signal) {
    try {
      process.kill(this.process.pid, signal);
    } catch {
      // already gone
    }
  }

  async probe() {
    const probed = this.process;
    const ok = (await httpStatus(`${this.url}/health/ready`, 1_000)) === 200;
    // A probe that was in flight when the replica was killed does not make it ready again.
    this.ready = ok && probed === this.process && probed.alive() && !this.expectedDeath;
    return this.ready;
  }
}

/** A service's replicas and the balancer in front of them. */
export class Deployment {
  constructor(group, service, replicas, env) {
    this.service = service;
    this.replicas = Array.from({ length: replicas }, (_, i) => new Replica(group, service, i + 1, env));
    this.next = 0;
    this.port = 0;
  }

  async start() {
    this.port = await freePort();
    this.sockets = new Set();
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      this.#route(socket);
    });
    await new Promise((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    await Promise.all(this.replicas.map((replica) => replica.start()));
  }

  #route(socket, tried = 0) {
    const ready = this.replicas.filter((replica) => replica.ready);
    if (ready.length === 0 || tried >= ready.length) {
      socket.destroy();
      return;
    }
    const replica = ready[this.next++ % ready.length];
    const upstream = connect({ port: replica.port, host: '127.0.0.1' });
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      socket.pipe(upstream).pipe(socket);
    });
    upstream.once('error', () => {
      // Refused before anything was sent (the replica just died): try the next one, as kube-proxy
      // would on a fresh connection; a connection that breaks later is the client's to retry.
      if (!connected) this.#route(socket, tried + 1);
      else socket.destroy();
    });
    socket.once('error', () => upstream.destroy());
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => connected && socket.destroy());
  }

  allReady() {
    return this.replicas.every((replica) => replica.ready);
  }

  async stop() {
    const closed = new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve()));
    for (const socket of this.sockets) socket.destroy(); // the edge's keep-alive connections
    await closed;
  }
}

/** Keeps every replica running (restarts the dead) and probes readiness, until stopped. */
export class Supervisor {
  constructor(deployments) {
    this.deployments = deployments;
    this.stopped = false;
  }

  get replicas() {
    return this.deployments.flatMap((deployment) => deployment.replicas);
  }

  run() {
    this.loop = (async () => {
      while (!this.stopped) {
        await Promise.all(this.replicas.map((replica) => this.#tend(replica)));
        await sleep(PROBE_INTERVAL_MS);
      }
    })();
  }

  async #tend(replica) {
    if (replica.process.alive()) return replica.probe();
    replica.ready = false;
    if (replica.restarting) return;
    replica.restarting = true;
    if (!replica.expectedDeath) {
      replica.crashes.push({
        at: Date.now(),
        code: replica.process.exitCode,
        signal: replica.process.signal,
      });
    }
    await sleep(RESTART_DELAY_MS);
    if (!this.stopped) await replica.start();
    replica.restarting = false;
  }

  allReady() {
    return this.deployments.every((deployment) => deployment.allReady());
  }

  /** Milliseconds until every replica passes its probe (null when not within timeoutMs). */
  async untilAllReady(timeoutMs) {
    const since = Date.now();
    const ok = await pollUntil(() => this.allReady(), { timeoutMs, intervalMs: 200 });
    return ok ? Date.now() - since : null;
  }

  async stop() {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.deployments.map((deployment) => deployment.stop()));
  }
}
