// The chaos run's own infrastructure, so it can stop and restart it without touching the machine's:
// a PostgreSQL cluster (initdb + pg_ctl on its own port and data directory) and a nats-server with
// JetStream (its own port and store directory). Both live under the run's folder and are removed
// with it.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './lib/net.mjs';
import { fail, pollUntil, sleep } from './lib/util.mjs';

const IS_ROOT = process.getuid?.() === 0;
const PG_BIN = [17, 16, 15, 14].map((version) => `/usr/lib/postgresql/${version}/bin`);

function pgTool(name) {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (found) return found;
  for (const dir of PG_BIN) {
    const path = join(dir, name);
    if (spawnSync('test', ['-x', path]).status === 0) return path;
  }
  return fail(`${name} is not installed (PostgreSQL server binaries: apt-get install -y postgresql).`);
}

/** Runs a PostgreSQL tool, as the postgres user when we are root (initdb and postgres refuse root). */
function runPg(tool, args) {
  const [command, argv] = IS_ROOT
    ? ['runuser', ['-u', 'postgres', '--', pgTool(tool), ...args]]
    : [pgTool(tool), args];
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) fail(`${tool} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

export class PostgresCluster {
  constructor(dir) {
    this.dataDir = join(dir, 'pgdata');
    this.logFile = join(dir, 'postgres.log');
    this.port = 0;
  }

  get adminUrl() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  url(database) {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start() {
    this.port = await freePort();
    mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    if (IS_ROOT) {
      const { uid, gid } = postgresUser();
      for (const path of [this.dataDir, join(this.dataDir, '..')]) chownSync(path, uid, gid);
    }
    runPg('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    this.#ctl('start');
    await this.waitReady();
  }

  #ctl(action, mode) {
    const options = `-p ${this.port} -k ${this.dataDir} -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off`;
    runPg('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      this.logFile,
      '-w',
      '-t',
      '60',
      '-o',
      options,
      ...(mode ? ['-m', mode] : []),
      action,
    ]);
  }

  /** `pg_ctl stop -m fast|immediate`, `downMs` without a database, then start: every connection is cut. */
  async restart(mode, downMs) {
    this.#ctl('stop', mode);
    await sleep(downMs);
    this.#ctl('start');
    await this.waitReady();
  }

  async waitReady() {
    const ok = await pollUntil(
      async () =>
        this.query('SELECT 1').then(
          () => true,
          () => false,
        ),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    if (!ok)
      fail(
        `PostgreSQL on port ${this.port} did not come up:\n${readFileSync(this.logFile, 'utf8').slice(-2000)}`,
      );
  }

  async query(sql, params = [], database = 'postgres') {
    const client = new pg.Client({ connectionString: this.url(database), application_name: 'byrd-chaos' });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  stop() {
    try {
      this.#ctl('stop', 'immediate');
    } catch {
      // not running
    }
  }
}

function postgresUser() {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) fail('Running as root needs a "postgres" user for the PostgreSQL cluster.');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class NatsServer {
  constructor(dir) {
    this.storeDir = join(dir, 'nats');
    this.logFile = join(dir, 'nats.log');
    this.port = 0;
    this.child = null;
  }

  get url() {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start() {
    this.port ||= await freePort();
    mkdirSync(this.storeDir, { recursive: true });
    const binary =
      spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).stdout.trim() ||
      ['/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find(
        (path) => spawnSync('test', ['-x', path]).status === 0,
      );
    if (!binary) fail('nats-server is not installed (apt-get install -y nats-server).');
    this.child = spawn(
      binary,
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir, '-l', this.logFile],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.exited = exited;
    const ok = await pollUntil(() => canConnect(this.port), { timeoutMs: 15_000, intervalMs: 100 });
    if (!ok)
      fail(`nats-server did not listen on ${this.port}:\n${readFileSync(this.logFile, 'utf8').slice(-2000)}`);
    await sleep(300); // JetStream finishes recovering its store just after the port opens
  }

  /** SIGTERM (a clean shutdown, as `kubectl delete pod` does) and wait until it is gone. */
  async stop(signal = 'SIGTERM') {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode) return;
    this.child.kill(signal);
    await Promise.race([this.exited, sleep(10_000)]);
    if (this.child.exitCode === null && !this.child.signalCode) this.child.kill('SIGKILL');
    await this.exited;
  }
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
