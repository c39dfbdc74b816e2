#!/usr/bin/env node
// The local stack: `npm start` on a fresh clone brings up everything.
//
//   1. installs npm dependencies (when node_modules is missing or older than package-lock.json)
//   2. makes sure PostgreSQL and NATS with JetStream answer: uses running ones, starts installed
//      ones, installs them with apt-get when running as root, else says what to run
//   3. builds every workspace (turbo)
//   4. runs each service's migrations (one database per service, created by its migrate script)
//   5. seeds a sandbox merchant once (.local/sandbox-merchant.json) and prints its API key; keys the
//      services must keep across restarts are generated once into .local/secrets.json
//   6. starts every built service of deploy/routes.json and the edge on http://127.0.0.1:8080
//   7. waits until they are ready and prints the URLs and a curl to try
// Ctrl-C (or SIGTERM) stops the services, the edge, and a PostgreSQL/NATS this script started
// (ones that were already running are left alone). Data stays where it is. Debian's nats-server
// service (started by its package, /etc/nats-server.conf without JetStream) is disabled, as root,
// and a nats-server with JetStream started in its place.
//
// Flags:
//   --no-install   skip `npm install` (quick restart)
//   --skip-build   skip `turbo run build` (quick restart; uses the dist/ folders as they are)
//   --infra-only   only make sure PostgreSQL and NATS are up, leave them running, exit (used by .ci/run)
//   --help         print this header
//
// Environment (defaults in brackets):
//   PGHOST [127.0.0.1]  PGPORT [5432]  PGUSER [postgres]  (PGPASSWORD is passed on if set)
//   NATS_URL [nats://127.0.0.1:4222]
//   NATS_STORE_DIR [/var/lib/nats-server as root, else .local/nats/store]  JetStream store of a NATS we start
//   EDGE_PORT [8080]
// Per-service extra variables: deploy/local/services.env.json, { "<service>": { "VAR": "value" } }.
//
// Only Node built-ins are used here, so this runs before `npm install`.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { serviceProcessEnv } from '../node-options.mjs';
import { needsNpmInstall, ROOT } from './dependencies.mjs';

const ROUTES_FILE = join(ROOT, 'deploy/routes.json');
const SERVICES_ENV_FILE = join(ROOT, 'deploy/local/services.env.json');
const EDGE_SCRIPT = join(ROOT, 'deploy/local/edge.mjs');
const CLI_SCRIPT = join(ROOT, 'deploy/local/cli.mjs');
const CLI_ENTRY = join(ROOT, 'libs/platform/dist/cli/main.js');
const LOCAL_DIR = join(ROOT, '.local');
const MERCHANT_FILE = join(LOCAL_DIR, 'sandbox-merchant.json');
const SECRETS_FILE = join(LOCAL_DIR, 'secrets.json');
/**
 * Keys a service must keep across restarts (what they sealed is stored), generated once per checkout
 * into .local/secrets.json (mode 600). In Kubernetes they come from Secrets (charts/byrd values).
 */
const aesKey = () => randomBytes(32).toString('base64');
const LOCAL_SECRETS = {
  payments: { CARD_SEAL_KEY: aesKey },
  'webhook-service': { WEBHOOK_SECRETS_KEYS: aesKey },
  'gateway-tokens': { VAULT_KEKS: () => `dev1:${aesKey()}`, VAULT_FINGERPRINT_KEY: aesKey },
};
const IS_ROOT = process.getuid?.() === 0;

const POSTGRES_WAIT_MS = 30_000;
const NATS_WAIT_MS = 15_000;
const SERVICE_READY_WAIT_MS = 90_000;
const EDGE_READY_WAIT_MS = 15_000;
const STOP_WAIT_MS = 10_000;

const USE_COLOUR = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const NAME_COLOURS = [36, 35, 33, 32, 34, 96, 95, 93];

// Everything this script started and must stop again.
const state = {
  processes: new Set(), // { name, child, exited: Promise } of long-running children and running tasks
  startedPostgres: null, // { version, cluster } when this script started the cluster
  stopping: false,
};

// ---------------------------------------------------------------------------------------------
// Output

function paint(code, text) {
  return USE_COLOUR ? `\x1b[${code}m${text}\x1b[0m` : text;
}

function step(message) {
  console.log(paint('1;36', `==> ${message}`));
}

function note(message) {
  console.log(`    ${message}`);
}

class Fatal extends Error {}

function fail(message) {
  throw new Fatal(message);
}

function pipeLines(stream, prefix, out) {
  createInterface({ input: stream }).on('line', (line) => out.write(`${prefix} ${line}\n`));
}

// ---------------------------------------------------------------------------------------------
// Configuration

function parseFlags(argv) {
  const known = new Set(['--no-install', '--skip-build', '--infra-only', '--help']);
  for (const arg of argv) {
    if (!known.has(arg)) {
      console.error(`Unknown option ${arg}. Options: ${[...known].join(' ')}`);
      process.exit(2);
    }
  }
  return {
    install: !argv.includes('--no-install'),
    build: !argv.includes('--skip-build'),
    infraOnly: argv.includes('--infra-only'),
    help: argv.includes('--help'),
  };
}

function portFrom(name, fallback) {
  const value = process.env[name] || String(fallback);
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    fail(`${name} must be a TCP port number (1-65535), got "${value}".`);
  }
  return port;
}

function readConfig() {
  const natsUrlText = process.env.NATS_URL || 'nats://127.0.0.1:4222';
  let natsUrl;
  try {
    natsUrl = new URL(natsUrlText);
  } catch {
    fail(`NATS_URL must be a URL like nats://127.0.0.1:4222, got "${natsUrlText}".`);
  }
  const edgePort = portFrom('EDGE_PORT', 8080);
  return {
    pg: {
      host: process.env.PGHOST || '127.0.0.1',
      port: portFrom('PGPORT', 5432),
      user: process.env.PGUSER || 'postgres',
    },
    nats: { url: natsUrlText, host: natsUrl.hostname || '127.0.0.1', port: Number(natsUrl.port || 4222) },
    natsStoreDir:
      process.env.NATS_STORE_DIR || (IS_ROOT ? '/var/lib/nats-server' : join(LOCAL_DIR, 'nats/store')),
    edgePort,
    edgeUrl: `http://127.0.0.1:${edgePort}`,
  };
}

function isLocalHost(host) {
  return ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
}

function databaseUrl(pg, database) {
  const host = pg.host.includes(':') && !pg.host.startsWith('[') ? `[${pg.host}]` : pg.host;
  return `postgres://${encodeURIComponent(pg.user)}@${host}:${pg.port}/${database}`;
}

// ---------------------------------------------------------------------------------------------
// Processes

/** Runs a command to completion. stdio 'inherit' shows its output; returns the exit code. */
function run(command, args, { env = process.env, cwd = ROOT, stdio = 'inherit', name = command } = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd, env, stdio });
    const entry = track(name, child);
    child.on('error', (error) => {
      console.error(`Could not run ${command}: ${error.message}`);
    });
    entry.exited.then(({ code }) => resolveRun(code ?? 1));
  });
}

/** Runs a command and collects its stdout (stderr is shown). */
function capture(command, args, { env = process.env, cwd = ROOT } = {}) {
  return new Promise((resolveCapture) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', () => {});
    track(command, child).exited.then(({ code }) => resolveCapture({ code: code ?? 1, stdout }));
  });
}

/** Registers a child so a shutdown can stop it; `exited` resolves after it is gone. */
function track(name, child, { group = false } = {}) {
  const entry = { name, child, group };
  entry.exited = new Promise((resolveExit) => {
    const done = (code, signal) => {
      state.processes.delete(entry);
      resolveExit({ code, signal });
    };
    child.once('close', done);
    child.once('error', () => done(null, null));
  });
  state.processes.add(entry);
  return entry;
}

/** Sends a signal to a tracked child (and its process group when it has one). */
function signal(entry, name) {
  try {
    if (entry.group) process.kill(-entry.child.pid, name);
    else entry.child.kill(name);
  } catch {
    // already gone
  }
}

/** Starts a long-running child in its own process group, output prefixed with [name]. */
function startLongRunning(name, command, args, { env, cwd, colour }) {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = paint(colour, `[${name}]`);
  pipeLines(child.stdout, prefix, process.stdout);
  pipeLines(child.stderr, prefix, process.stderr);
  const entry = track(name, child, { group: true });
  watchForUnexpectedExit(entry);
  return entry;
}

function watchForUnexpectedExit(entry) {
  entry.exited.then(({ code, signal: killedBy }) => {
    if (state.stopping) return;
    const how = killedBy ? `was killed by ${killedBy}` : `exited with code ${code}`;
    console.error(paint('1;31', `\n${entry.name} ${how} unexpectedly; stopping everything.`));
    void shutdown(1);
  });
}

function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Network checks

function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolveCheck) => {
    const socket = connect({ host, port });
    const finish = (ok) => {
      socket.destroy();
      resolveCheck(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** The INFO a NATS server sends on connect, or null when nothing NATS-like answers. */
function natsInfo(host, port, timeoutMs = 1000) {
  return new Promise((resolveInfo) => {
    const socket = connect({ host, port });
    let received = '';
    const finish = (info) => {
      socket.destroy();
      resolveInfo(info);
    };
    socket.setTimeout(timeoutMs, () => finish(null));
    socket.once('error', () => finish(null));
    socket.on('data', (chunk) => {
      received += chunk;
      const end = received.indexOf('\r\n');
      if (end === -1) return;
      const line = received.slice(0, end);
      try {
        finish(line.startsWith('INFO ') ? JSON.parse(line.slice(5)) : null);
      } catch {
        finish(null);
      }
    });
  });
}

async function waitUntil(check, timeoutMs, failure) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (state.stopping) fail('stopped');
    if (await check()) return;
    await sleep(300);
  }
  fail(failure);
}

function sleep(ms) {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

async function httpStatus(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Step a: npm install

async function installDependencies(flags) {
  if (!flags.install) {
    step('Dependencies: skipped (--no-install)');
    return;
  }
  if (!needsNpmInstall()) {
    step('Dependencies: up to date');
    return;
  }
  step('Installing dependencies (npm install)');
  // Never `npm ci`: the registry here lacks non-Linux optional packages, which `npm ci` insists on.
  if ((await run('npm', ['install'])) !== 0) fail('npm install failed (see above).');
}

// ---------------------------------------------------------------------------------------------
// Step b: PostgreSQL

async function pgAnswers(pg) {
  const pgIsReady = findExecutable('pg_isready');
  if (!pgIsReady) return canConnect(pg.host, pg.port);
  const result = await capture(pgIsReady, ['-q', '-h', pg.host, '-p', String(pg.port), '-t', '1']);
  return result.code === 0;
}

/** Clusters from pg_lsclusters: [{ version, cluster, port, status }]. */
async function listPostgresClusters() {
  const lsclusters = findExecutable('pg_lsclusters');
  if (!lsclusters) return [];
  const { stdout } = await capture(lsclusters, ['--no-header']);
  return stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 4)
    .map(([version, cluster, port, status]) => ({ version, cluster, port: Number(port), status }));
}

function postgresInstalled() {
  return (
    existsSync('/etc/postgresql') &&
    readdirSync('/etc/postgresql').length > 0 &&
    findExecutable('pg_ctlcluster')
  );
}

function canUseApt() {
  return IS_ROOT && Boolean(findExecutable('apt-get'));
}

async function aptInstall(packageName) {
  note(`installing ${packageName} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if ((await run('apt-get', ['update'], { env })) !== 0) fail('apt-get update failed (see above).');
  if ((await run('apt-get', ['install', '-y', packageName], { env })) !== 0) {
    fail(`apt-get install -y ${packageName} failed (see above).`);
  }
}

/** A freshly installed Debian cluster asks for passwords over TCP; a dev box logs in without. */
function allowLocalTrust({ version, cluster }) {
  const hbaFile = `/etc/postgresql/${version}/${cluster}/pg_hba.conf`;
  const rule = 'host all all 127.0.0.1/32 trust';
  const current = readFileSync(hbaFile, 'utf8');
  if (current.includes(rule)) return;
  note(`allowing password-less logins from 127.0.0.1 (local development) in ${hbaFile}`);
  writeFileSync(hbaFile, `# added by deploy/local/start.mjs for local development\n${rule}\n${current}`);
}

async function pgCtlCluster(cluster, action) {
  const args = ['--skip-systemctl-redirect', cluster.version, cluster.cluster, action];
  if (action === 'stop') args.push('-m', 'fast');
  return run('pg_ctlcluster', args);
}

function postgresHowTo(pg) {
  return [
    `PostgreSQL does not answer on ${pg.host}:${pg.port}. Install and start it, then run npm start again:`,
    '  sudo apt-get install -y postgresql',
    '  sudo pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    'or point PGHOST, PGPORT and PGUSER at a running PostgreSQL.',
  ].join('\n');
}

async function ensurePostgres(pg) {
  step(`PostgreSQL on ${pg.host}:${pg.port}`);
  if (await pgAnswers(pg)) {
    note('already running: using it');
  } else {
    await startLocalPostgres(pg);
  }
  await checkPostgresLogin(pg);
}

async function startLocalPostgres(pg) {
  if (!isLocalHost(pg.host)) fail(`PostgreSQL does not answer on ${pg.host}:${pg.port} (PGHOST/PGPORT).`);
  let installedNow = false;
  if (!postgresInstalled()) {
    if (!canUseApt()) fail(postgresHowTo(pg));
    await aptInstall('postgresql');
    installedNow = true;
  }
  const cluster = await postgresClusterOnPort(pg.port);
  if (installedNow) allowLocalTrust(cluster);
  if (!IS_ROOT) {
    fail(
      `PostgreSQL ${cluster.version}/${cluster.cluster} is installed but not running. Start it, then run npm start again:\n` +
        `  sudo pg_ctlcluster --skip-systemctl-redirect ${cluster.version} ${cluster.cluster} start`,
    );
  }
  if (cluster.status === 'online') {
    // Started by the package install: leave it running, just pick up the new pg_hba.conf.
    if (installedNow) await pgCtlCluster(cluster, 'reload');
  } else {
    note(`starting cluster ${cluster.version}/${cluster.cluster}`);
    if ((await pgCtlCluster(cluster, 'start')) !== 0) {
      fail(`pg_ctlcluster could not start ${cluster.version}/${cluster.cluster} (see above).`);
    }
    state.startedPostgres = cluster;
  }
  await waitUntil(
    () => pgAnswers(pg),
    POSTGRES_WAIT_MS,
    `PostgreSQL did not answer on ${pg.host}:${pg.port} within ${POSTGRES_WAIT_MS / 1000} s; see /var/log/postgresql/.`,
  );
  note('ready');
}

async function postgresClusterOnPort(port) {
  const clusters = await listPostgresClusters();
  const cluster = clusters.find((candidate) => candidate.port === port);
  if (!cluster) {
    const known = clusters.map((c) => `${c.version}/${c.cluster} on port ${c.port}`).join(', ') || 'none';
    fail(
      `PostgreSQL is installed but no cluster uses port ${port} (clusters: ${known}).\n` +
        `Set PGPORT, or create one: sudo pg_createcluster <version> main -p ${port}`,
    );
  }
  return cluster;
}

/** Fails early, with a hint, when the server refuses our user (psql ships with the server). */
async function checkPostgresLogin(pg) {
  const psql = findExecutable('psql');
  if (!psql) return;
  const env = { ...process.env, PGCONNECT_TIMEOUT: '5' };
  const target = ['-h', pg.host, '-p', String(pg.port), '-U', pg.user, '-d', 'postgres'];
  const { code } = await capture(psql, [...target, '-w', '-Atqc', 'select 1'], { env });
  if (code !== 0) {
    const cluster = (await listPostgresClusters()).find((candidate) => candidate.port === pg.port);
    const hbaFile = cluster
      ? `/etc/postgresql/${cluster.version}/${cluster.cluster}/pg_hba.conf`
      : 'pg_hba.conf';
    fail(
      `PostgreSQL refused user "${pg.user}" (see above). Set PGUSER/PGPASSWORD, or allow local logins by adding\n` +
        `  host all all 127.0.0.1/32 trust\nat the top of ${hbaFile} and reloading PostgreSQL.`,
    );
  }
}

async function stopPostgres() {
  const cluster = state.startedPostgres;
  if (!cluster) return;
  note(`stopping PostgreSQL ${cluster.version}/${cluster.cluster} (started by this script)`);
  await pgCtlCluster(cluster, 'stop');
}

// ---------------------------------------------------------------------------------------------
// Step b: NATS with JetStream

function natsHowTo(nats) {
  return [
    `NATS does not answer on ${nats.host}:${nats.port}. Install and start it with JetStream, then run npm start again:`,
    '  sudo apt-get install -y nats-server',
    `  nats-server -a ${nats.host} -p ${nats.port} -js -sd ${join(LOCAL_DIR, 'nats/store')}`,
    'or point NATS_URL at a running NATS server with JetStream enabled.',
  ].join('\n');
}

function startNatsServer(binary, nats, storeDir, flags) {
  const logFile = join(LOCAL_DIR, 'nats/nats-server.log');
  mkdirSync(storeDir, { recursive: true });
  mkdirSync(dirname(logFile), { recursive: true });
  note(`starting ${binary} (JetStream store ${storeDir}, log ${logFile})`);
  const args = ['-a', nats.host, '-p', String(nats.port), '-js', '-sd', storeDir, '-l', logFile];
  const child = spawn(binary, args, { cwd: ROOT, detached: true, stdio: 'ignore' });
  if (flags.infraOnly) {
    child.unref(); // keeps running after this script ends
    return;
  }
  watchForUnexpectedExit(track('nats', child, { group: true }));
}

async function ensureNats(nats, storeDir, flags) {
  step(`NATS (JetStream) on ${nats.host}:${nats.port}`);
  if (await natsInfo(nats.host, nats.port)) {
    note('already running: using it');
  } else {
    await startLocalNats(nats, storeDir, flags);
  }
  const info = await natsInfo(nats.host, nats.port);
  if (!info?.jetstream) await replacePackageNats(nats, storeDir, flags);
}

function noJetStream(nats) {
  return (
    `The NATS server on ${nats.host}:${nats.port} runs without JetStream. Restart it with -js (nats-server -js -sd <dir>);\n` +
    'for the Debian nats-server service, add "jetstream { store_dir: /var/lib/nats-server }" to /etc/nats-server.conf,\n' +
    'or run sudo systemctl disable --now nats-server and npm start starts its own.'
  );
}

/**
 * Debian's nats-server package starts nats-server.service from /etc/nats-server.conf, which has no
 * JetStream, as soon as it is installed (and at every boot). When that service is what answers, it
 * is turned off and a nats-server with JetStream is started in its place, as when nothing ran.
 */
async function replacePackageNats(nats, storeDir, flags) {
  const systemctl = findExecutable('systemctl');
  const packageService =
    IS_ROOT &&
    isLocalHost(nats.host) &&
    systemctl &&
    (await capture(systemctl, ['is-active', '--quiet', 'nats-server'])).code === 0;
  if (!packageService) fail(noJetStream(nats));
  note('it is Debian\'s nats-server service, whose /etc/nats-server.conf has no JetStream:');
  note('disabling it (systemctl disable --now nats-server) and starting nats-server with JetStream instead');
  if ((await run(systemctl, ['disable', '--now', 'nats-server'])) !== 0) {
    fail('systemctl disable --now nats-server failed (see above).');
  }
  await waitUntil(
    async () => !(await canConnect(nats.host, nats.port)),
    NATS_WAIT_MS,
    `${nats.host}:${nats.port} still answers with nats-server.service stopped: it is another server.\n${noJetStream(nats)}`,
  );
  await startNatsAndWait(findExecutable('nats-server'), nats, storeDir, flags);
  if (!(await natsInfo(nats.host, nats.port))?.jetstream) fail(noJetStream(nats));
}

async function startLocalNats(nats, storeDir, flags) {
  if (!isLocalHost(nats.host)) fail(`NATS does not answer on ${nats.host}:${nats.port} (NATS_URL).`);
  if (await canConnect(nats.host, nats.port)) {
    fail(`Something that is not NATS listens on ${nats.host}:${nats.port}.`);
  }
  const binary = await natsServerBinary(nats);
  if (await natsInfo(nats.host, nats.port)) {
    // Without JetStream (Debian's service): ensureNats then puts ours in its place.
    note('started by the package install');
    return;
  }
  await startNatsAndWait(binary, nats, storeDir, flags);
}

async function startNatsAndWait(binary, nats, storeDir, flags) {
  startNatsServer(binary, nats, storeDir, flags);
  await waitUntil(
    async () => (await natsInfo(nats.host, nats.port)) !== null,
    NATS_WAIT_MS,
    `NATS did not answer on ${nats.host}:${nats.port} within ${NATS_WAIT_MS / 1000} s; see .local/nats/nats-server.log.`,
  );
  note('ready');
}

async function natsServerBinary(nats) {
  const found = findExecutable('nats-server');
  if (found) return found;
  if (!canUseApt()) fail(natsHowTo(nats));
  await aptInstall('nats-server');
  const installed = findExecutable('nats-server');
  if (!installed) fail('apt-get installed nats-server, but no nats-server binary was found.');
  return installed;
}

// ---------------------------------------------------------------------------------------------
// Steps c and d: build and migrations

async function buildAll(flags) {
  if (!flags.build) {
    step('Build: skipped (--skip-build)');
    return;
  }
  step('Building all workspaces (turbo run build)');
  const turbo = join(ROOT, 'node_modules/.bin/turbo');
  if (!existsSync(turbo)) fail('turbo is not installed; run without --no-install.');
  if ((await run(turbo, ['run', 'build'])) !== 0) fail('The build failed (see above).');
}

/** Services of deploy/routes.json: [{ name, port, dir, main, migrate, database }]. */
function loadServices() {
  const table = JSON.parse(readFileSync(ROUTES_FILE, 'utf8'));
  return Object.entries(table.services ?? {}).map(([name, service]) => {
    const dir = join(ROOT, 'apps', name);
    return {
      name,
      port: service.port,
      dir,
      main: join(dir, 'dist/main.js'),
      migrate: join(dir, 'dist/migrate.js'),
      database: `byrd_${name.replaceAll('-', '_')}`,
    };
  });
}

function builtServices(services) {
  return services.filter((service) => {
    if (!existsSync(service.dir)) {
      note(`skipping ${service.name}: apps/${service.name} does not exist yet`);
      return false;
    }
    if (!existsSync(service.main)) {
      note(`skipping ${service.name}: apps/${service.name}/dist/main.js is not built`);
      return false;
    }
    return true;
  });
}

function colourOf(index) {
  return NAME_COLOURS[index % NAME_COLOURS.length];
}

async function migrate(services, config) {
  step('Running migrations');
  if (services.length === 0) note('no built services');
  for (const [index, service] of services.entries()) {
    if (!existsSync(service.migrate)) {
      note(`${service.name}: no dist/migrate.js, nothing to migrate`);
      continue;
    }
    note(`${service.name} -> database ${service.database}`);
    const env = { ...process.env, DATABASE_URL: databaseUrl(config.pg, service.database), LOG_LEVEL: 'info' };
    const code = await runPrefixed(`${service.name}:migrate`, service.migrate, {
      env,
      cwd: service.dir,
      colour: colourOf(index),
    });
    if (code !== 0) fail(`Migrations of ${service.name} failed (exit code ${code}, see above).`);
  }
}

function runPrefixed(name, script, { env, cwd, colour }) {
  const child = spawn(process.execPath, [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = paint(colour, `[${name}]`);
  pipeLines(child.stdout, prefix, process.stdout);
  pipeLines(child.stderr, prefix, process.stderr);
  return track(name, child).exited.then(({ code }) => code ?? 1);
}

// ---------------------------------------------------------------------------------------------
// Step e: sandbox merchant

function readSavedMerchant() {
  if (!existsSync(MERCHANT_FILE)) return null;
  try {
    const saved = JSON.parse(readFileSync(MERCHANT_FILE, 'utf8'));
    return saved.merchantId && saved.apiKey ? saved : null;
  } catch {
    return null;
  }
}

function saveMerchant(merchant) {
  mkdirSync(LOCAL_DIR, { recursive: true, mode: 0o700 });
  writeFileSync(MERCHANT_FILE, `${JSON.stringify(merchant, null, 2)}\n`, { mode: 0o600 });
  chmodSync(MERCHANT_FILE, 0o600);
}

function cli(args, config) {
  const env = { ...process.env, NATS_URL: config.nats.url };
  return capture(process.execPath, [CLI_SCRIPT, ...args], { env });
}

function parseMerchantLine(stdout) {
  const lines = stdout.trim().split('\n').reverse();
  for (const line of lines) {
    try {
      const value = JSON.parse(line);
      if (value && value.merchantId && value.apiKey) return value;
    } catch {
      // not the JSON line
    }
  }
  return null;
}

async function seedSandboxMerchant(config) {
  step('Sandbox merchant');
  if (!existsSync(CLI_ENTRY)) {
    note('skipped: the CLI (libs/platform/dist/cli/main.js) is not built yet');
    return null;
  }
  const saved = readSavedMerchant();
  if (saved) {
    const { code } = await cli(['keys', 'verify', saved.apiKey], config);
    if (code === 0) {
      note(`reusing ${saved.merchantId} from .local/sandbox-merchant.json`);
      return saved;
    }
    note('the saved API key is no longer valid; creating a new sandbox merchant');
  }
  const { code, stdout } = await cli(
    ['merchants', 'create', '--name', 'Sandbox Merchant', '--mode', 'sandbox', '--json'],
    config,
  );
  if (code !== 0) fail(`Creating the sandbox merchant failed (exit code ${code}, see above).`);
  const merchant = parseMerchantLine(stdout);
  if (!merchant) fail(`The CLI did not print the new merchant as JSON; it printed:\n${stdout}`);
  saveMerchant(merchant);
  note(`created ${merchant.merchantId}, saved to .local/sandbox-merchant.json`);
  return merchant;
}

// ---------------------------------------------------------------------------------------------
// Steps f, g and h: services, edge, readiness

/**
 * The development keys of LOCAL_SECRETS, and an RPC identity (Ed25519 key pair) per service, created
 * on first use and kept in .local/secrets.json.
 */
function localSecrets(services) {
  mkdirSync(LOCAL_DIR, { recursive: true, mode: 0o700 });
  const saved = existsSync(SECRETS_FILE) ? JSON.parse(readFileSync(SECRETS_FILE, 'utf8')) : {};
  let changed = false;
  for (const [service, generators] of Object.entries(LOCAL_SECRETS)) {
    saved[service] ??= {};
    for (const [name, generate] of Object.entries(generators)) {
      if (saved[service][name]) continue;
      saved[service][name] = generate();
      changed = true;
    }
  }
  saved.rpcIdentities ??= {};
  for (const { name } of services) {
    if (saved.rpcIdentities[name]) continue;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    saved.rpcIdentities[name] = {
      privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    };
    changed = true;
  }
  if (changed) {
    writeFileSync(SECRETS_FILE, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
    note('generated development keys in .local/secrets.json');
  }
  return saved;
}

function readServicesEnv() {
  if (!existsSync(SERVICES_ENV_FILE)) return {};
  const all = JSON.parse(readFileSync(SERVICES_ENV_FILE, 'utf8'));
  for (const [service, vars] of Object.entries(all)) {
    if (service.startsWith('$')) continue;
    for (const [name, value] of Object.entries(vars ?? {})) {
      if (typeof value !== 'string') fail(`${SERVICES_ENV_FILE}: ${service}.${name} must be a string.`);
    }
  }
  return all;
}

async function ensurePortFree(port, owner) {
  if (await canConnect('127.0.0.1', port)) {
    fail(
      `Port ${port} (${owner}) is already in use. Is another npm start running? Stop it, or free the port.`,
    );
  }
}

/** Checked before anything starts, so a second `npm start` fails fast and clearly. */
async function ensurePortsFree(services, config) {
  for (const service of services) await ensurePortFree(service.port, service.name);
  await ensurePortFree(config.edgePort, 'edge');
}

function startServices(services, config) {
  step('Starting services');
  if (services.length === 0) note('no built services to start');
  const extraEnv = readServicesEnv();
  const secrets = localSecrets(services);
  const trustedCallers = Object.entries(secrets.rpcIdentities)
    .map(([name, keys]) => `${name}:${keys.publicKey}`)
    .join(',');
  for (const [index, service] of services.entries()) {
    const env = {
      ...process.env,
      HTTP_PORT: String(service.port),
      HTTP_HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(config.pg, service.database),
      NATS_URL: config.nats.url,
      PUBLIC_BASE_URL: config.edgeUrl,
      CHECKOUT_URL: `${config.edgeUrl}/checkout`,
      THREE_DS_SDK_URL: `${config.edgeUrl}/3ds/sdk.js`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
      ...serviceProcessEnv(),
      ...(secrets[service.name] ?? {}),
      RPC_SIGNING_KEY: secrets.rpcIdentities[service.name].privateKey,
      RPC_TRUSTED_CALLERS: trustedCallers,
      // The docs service merges the documents of the services the route table makes public.
      ...(service.name === 'api-docs' ? { ROUTE_TABLE: readFileSync(ROUTES_FILE, 'utf8') } : {}),
      ...(extraEnv[service.name] ?? {}),
    };
    startLongRunning(service.name, process.execPath, [service.main], {
      env,
      cwd: service.dir,
      colour: colourOf(index),
    });
  }
}

function startEdge(config) {
  step(`Starting the edge on ${config.edgeUrl}`);
  const env = { ...process.env, EDGE_PORT: String(config.edgePort), EDGE_HOST: '127.0.0.1', ROUTES_FILE };
  startLongRunning('edge', process.execPath, [EDGE_SCRIPT], { env, cwd: ROOT, colour: '1;37' });
}

async function waitForReady(services, config) {
  step('Waiting until everything is ready');
  await waitUntil(
    async () => (await httpStatus(`${config.edgeUrl}/health`)) === 200,
    EDGE_READY_WAIT_MS,
    `The edge did not answer ${config.edgeUrl}/health within ${EDGE_READY_WAIT_MS / 1000} s.`,
  );
  for (const service of services) {
    const url = `http://127.0.0.1:${service.port}/health/ready`;
    await waitUntil(
      async () => (await httpStatus(url)) === 200,
      SERVICE_READY_WAIT_MS,
      `${service.name} did not answer 200 on ${url} within ${SERVICE_READY_WAIT_MS / 1000} s (see its output above).`,
    );
    note(`${service.name} ready`);
  }
}

/** Width of the name column of the banner: the longest service name. */
const NAME_WIDTH = 16;

function printBanner(services, merchant, config) {
  const apiKey = merchant?.apiKey ?? '<your-api-key>';
  const lines = [
    '',
    paint('1;32', 'Byrd is running. Press Ctrl-C to stop everything.'),
    '',
    `  ${'edge'.padEnd(NAME_WIDTH)} ${config.edgeUrl}`,
  ];
  for (const service of services) {
    const url = `http://127.0.0.1:${service.port}`;
    lines.push(`  ${service.name.padEnd(NAME_WIDTH)} ${url}   docs ${url}/docs`);
  }
  if (services.length === 0) lines.push('  (no services are built yet)');
  lines.push('');
  if (merchant) {
    lines.push(`  sandbox merchant  ${merchant.merchantId}`, `  API key           ${merchant.apiKey}`);
  } else {
    lines.push('  sandbox merchant  not seeded (the CLI is not built yet)');
  }
  const body =
    '{"amount":"25.00","currency":"EUR","orderRef":"demo-1","orderOptions":{"redirectUrl":"https://example.com/return"}}';
  lines.push(
    '',
    'Create an order:',
    `  curl -s -X POST ${config.edgeUrl}/api/v2/orders -H "x-api-key: ${apiKey}" -H 'content-type: application/json' -d '${body}'`,
    '',
    `Then open its checkoutUrl (${config.edgeUrl}/checkout/#/payment?checkoutKey=...&orderId=...) to pay on the hosted form.`,
    '',
  );
  console.log(lines.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Step i: shutdown

async function stopAll(entries) {
  for (const entry of entries) signal(entry, 'SIGTERM');
  const stopped = Promise.all(entries.map((entry) => entry.exited)).then(() => true);
  const allGone = await Promise.race([stopped, sleep(STOP_WAIT_MS).then(() => false)]);
  if (allGone) return;
  for (const entry of entries) {
    if (state.processes.has(entry)) {
      note(`${entry.name} did not stop within ${STOP_WAIT_MS / 1000} s; killing it`);
      signal(entry, 'SIGKILL');
    }
  }
  await Promise.race([Promise.all(entries.map((entry) => entry.exited)), sleep(2000)]);
}

async function shutdown(exitCode) {
  if (state.stopping) return;
  state.stopping = true;
  const somethingToStop = state.processes.size > 0 || state.startedPostgres !== null;
  if (somethingToStop) step('Stopping');
  const all = [...state.processes];
  // Services and the edge first, then the NATS server they talk to.
  await stopAll(all.filter((entry) => entry.name !== 'nats'));
  await stopAll(all.filter((entry) => entry.name === 'nats'));
  await stopPostgres();
  if (somethingToStop) note('stopped; data is kept');
  process.exit(exitCode);
}

function handleSignals() {
  for (const name of ['SIGINT', 'SIGTERM']) {
    // npm forwards the terminal's Ctrl-C as a second SIGINT; the first one starts the shutdown.
    process.on(name, () => void shutdown(0));
  }
  // Last resort when this script dies on an error: take the children with it.
  process.on('exit', () => {
    for (const entry of state.processes) signal(entry, 'SIGKILL');
  });
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.help) {
    const header = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0];
    console.log(header.replace(/^#!.*\n/, '').replace(/^\/\/ ?/gm, ''));
    return;
  }
  handleSignals();
  const config = readConfig();

  if (!flags.infraOnly) await installDependencies(flags);
  await ensurePostgres(config.pg);
  await ensureNats(config.nats, config.natsStoreDir, flags);
  if (flags.infraOnly) {
    step('PostgreSQL and NATS are ready');
    process.exit(0);
  }

  await buildAll(flags);
  step('Services of deploy/routes.json');
  const services = builtServices(loadServices());
  await ensurePortsFree(services, config);
  await migrate(services, config);
  const merchant = await seedSandboxMerchant(config);
  startServices(services, config);
  startEdge(config);
  await waitForReady(services, config);
  printBanner(services, merchant, config);
}

main().catch(async (error) => {
  if (state.stopping) return;
  const message = error instanceof Fatal ? error.message : error.stack;
  console.error(paint('1;31', `\n${message}`));
  await shutdown(1);
});
