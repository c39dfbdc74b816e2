// `npm start`'s NATS step on a machine where Debian's nats-server service answers without JetStream
// (its package starts it from /etc/nats-server.conf as it installs, and at every boot): node --test.
// systemctl is a stand-in on PATH whose nats-server.service is a real nats-server without -js; the
// PostgreSQL step uses the machine's server, as `npm test` expects it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const START = join(dirname(fileURLToPath(import.meta.url)), 'start.mjs');
const NATS_SERVER = ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find(
  (candidate) => spawnSync(candidate, ['--version']).status === 0,
);
const skip =
  process.getuid?.() !== 0
    ? 'npm start replaces the package service only as root'
    : !NATS_SERVER && 'nats-server is not installed';

const work = mkdtempSync(join(tmpdir(), 'byrd-start-'));
const started = []; // pids of nats-servers to stop after the tests
after(() => {
  for (const pid of [...started, ...natsServersOn(work)]) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** The pids of nats-servers whose command line names a folder under `dir` (the stores npm start used). */
function natsServersOn(dir) {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0].endsWith('nats-server') && argv.some((arg) => arg.startsWith(dir));
      } catch {
        return false;
      }
    })
    .map(Number);
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The INFO line a NATS server greets with. */
function natsInfo(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    socket.setTimeout(2000, () => (socket.destroy(), resolve(null)));
    socket.on('error', () => resolve(null));
    socket.on('data', (chunk) => {
      text += chunk;
      if (!text.includes('\r\n')) return;
      socket.destroy();
      resolve(JSON.parse(text.slice(5, text.indexOf('\r\n'))));
    });
  });
}

async function until(check, ms = 10_000) {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * A nats-server without JetStream on a free port, and a systemctl that knows it as nats-server.service
 * when `isPackageService` (is-active; disable --now stops it), else knows no active nats-server.
 */
async function machineWithNatsWithoutJetStream(name, { isPackageService }) {
  const dir = join(work, name);
  const bin = join(dir, 'bin');
  spawnSync('mkdir', ['-p', bin]);
  const port = await freePort();
  const service = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  started.push(service.pid);
  assert.ok(await until(async () => (await natsInfo(port)) !== null), 'the stand-in service answers');
  const pidFile = join(dir, 'nats-server.service.pid');
  writeFileSync(pidFile, isPackageService ? String(service.pid) : '');
  const log = join(dir, 'systemctl.log');
  writeFileSync(log, '');
  writeFileSync(
    join(bin, 'systemctl'),
    `#!/bin/sh
echo "$*" >> '${log}'
pid=$(cat '${pidFile}')
case "$*" in
  "is-active --quiet nats-server") [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null ;;
  "disable --now nats-server") [ -z "$pid" ] || kill "$pid"; : > '${pidFile}' ;;
  *) exit 1 ;;
esac
`,
  );
  chmodSync(join(bin, 'systemctl'), 0o755);
  return { dir, bin, port, log, service };
}

/** `npm start -- --infra-only` (as .ci/run runs it) on that machine; resolves { code, output }. */
function startInfra({ dir, bin, port }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [START, '--infra-only'], {
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        NATS_URL: `nats://127.0.0.1:${port}`,
        NATS_STORE_DIR: join(dir, 'store'),
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test("npm start puts a nats-server with JetStream in place of Debian's service without it", { skip }, async () => {
  const machine = await machineWithNatsWithoutJetStream('package', { isPackageService: true });
  const { code, output } = await startInfra(machine);
  assert.equal(code, 0, output);
  assert.ok((await natsInfo(machine.port))?.jetstream, `JetStream answers on the port\n${output}`);
  assert.match(readFileSync(machine.log, 'utf8'), /^disable --now nats-server$/m, 'the service is disabled');
  assert.deepEqual(natsServersOn(machine.dir).length, 1, 'the JetStream server runs on its store');
  // The next run finds it running with JetStream and uses it.
  const again = await startInfra(machine);
  assert.equal(again.code, 0, again.output);
  assert.match(again.output, /already running: using it/);
});

test('npm start leaves a NATS without JetStream that is not the package service alone, saying what to do', { skip }, async () => {
  const machine = await machineWithNatsWithoutJetStream('other', { isPackageService: false });
  const { code, output } = await startInfra(machine);
  assert.equal(code, 1, output);
  assert.match(output, /runs without JetStream\. Restart it with -js/);
  assert.doesNotMatch(readFileSync(machine.log, 'utf8'), /disable/);
  assert.equal(machine.service.exitCode, null, 'the server is left running');
  assert.ok(await natsInfo(machine.port), 'and still answers');
});
