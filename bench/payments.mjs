// `npm run bench -- payments`: frictionless card payments (POST /api/v2/payment, card
// 5448280000000007, "25.00" EUR, a sandbox merchant's x-api-key) at N connections, against the
// payments service and against a bare Fastify + pg handler doing the same writes, in one run.
//
// What is compared, and why it is fair:
//   - "service" is apps/payments/dist (orders running beside it, as in the platform: it consumes
//     every transaction.* event); "bare" is bench/lib/bare-payments-server.mjs: Fastify + pg, the
//     same JSON body, an in-memory API-key check, and one DB transaction with the transaction row
//     and the outbox row (payments migrations run against its own database; --bare-3ds-row adds the
//     three_ds_sessions row the service also writes). Same pool size (DATABASE_POOL_SIZE, 10).
//   - Both are measured through the same edge process (deploy/local/edge.mjs; the bare handler
//     under the prefix /bench-bare/api/v2/payment), so the headline ratio measures the service and
//     not the proxy; then both directly (skip with --no-direct).
//   - One phase at a time (the machine has 2 cores): warm-up, wait for the outbox to drain, then
//     the measured window. After a service window the run waits until the relay has published every
//     outbox row and the orders consumer has caught up, and reports how long that took, so no phase
//     inherits another's backlog.
//   - Ledger: transaction rows = 2xx answers (allowing requests still in flight when a load window
//     closed), every outbox row published (none left), one stream message per transaction, orders handled each.
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { BenchEnvironment, poolFor } from './lib/environment.mjs';
import { guardedRun } from './lib/guarded-run.mjs';
import { freePort, requestJson, waitForHttp } from './lib/net.mjs';
import {
  migrate,
  serviceMain,
  serviceMigrate,
  startEdge,
  startService,
  writeRoutesFile,
} from './lib/stack.mjs';
import { runLoad } from './lib/load.mjs';
import { PACED_SHORTFALL, runPacedLoad, sustained } from './lib/paced-load.mjs';
import {
  cpuBetween,
  cpuSnapshot,
  machineBusyCores,
  memoryOf,
  otherCores,
  sampleRss,
  waitForQuietMachine,
} from './lib/proc-stats.mjs';
import { byLayer, summariseProfile } from './lib/cpu-profile.mjs';
import { sampleDbActivity, tableStats, tableStatsBetween } from './lib/pg-activity.mjs';
import { PREFILL_MERCHANT, prefillPayments } from './lib/prefill.mjs';
import { platformFiles } from './lib/platform.mjs';
import { distTimes } from './lib/build.mjs';
import { GOAL_SERVICE_RSS_MB, goalLine, table, writeResult } from './lib/report.mjs';
import {
  RESULTS_DIR,
  ROOT,
  TARGET_REVISION,
  TARGET_ROOT,
  dbName,
  fail,
  gitState,
  note,
  paint,
  pollUntil,
  positiveNumber,
  round,
  serviceEnvOf,
  sleep,
  step,
  timestamp,
} from './lib/util.mjs';

export const description = 'frictionless card payments through the edge, next to a bare Fastify + pg handler';

export const options = {
  duration: { type: 'string', default: '10', help: 'measured seconds per phase' },
  warmup: { type: 'string', default: '3', help: 'warm-up seconds before each measured window' },
  connections: { type: 'string', default: '50', help: 'concurrent connections' },
  'no-direct': { type: 'boolean', default: false, help: 'skip the direct (no edge) phases' },
  'bare-3ds-row': {
    type: 'boolean',
    default: false,
    help: 'bare handler also inserts the three_ds_sessions row the service writes',
  },
  prefill: {
    type: 'string',
    default: '0',
    help: 'rows of history (settled payments and their 3DS sessions) in both databases first, e.g. 1000000',
  },
  'idempotency-key': {
    type: 'boolean',
    default: false,
    help: 'send a unique idempotency-key with every request (the bare handler ignores it)',
  },
  'no-orders': {
    type: 'boolean',
    default: false,
    help: 'do not run orders (nobody consumes transaction.* events): payments alone',
  },
  'pool-size': {
    type: 'string',
    help: 'DATABASE_POOL_SIZE of payments and the bare handler (default: the service default, 10)',
  },
  profile: {
    type: 'boolean',
    default: false,
    help: 'CPU-profile payments (node --cpu-prof) and print where its time goes',
  },
  'quiet-wait': {
    type: 'string',
    default: '30',
    help: 'before each phase, wait up to this many seconds for other work on the machine to stop',
  },
  'keep-logs': { type: 'boolean', default: false, help: "keep the processes' logs (always kept on failure)" },
  'service-env': {
    type: 'string',
    multiple: true,
    help: 'extra environment of payments, KEY=VALUE (repeatable), e.g. OUTBOX_POLL_MS=20 to compare settings',
  },
};

/** dist files this benchmark runs (checked, and built when missing, before it runs). */
export const requires = () => [
  serviceMain('payments'),
  serviceMigrate('payments'),
  serviceMain('orders'),
  serviceMigrate('orders'),
  ...platformFiles(),
];

/** Layers of the payments request path, for the CPU profile summary. */
const LAYERS = [
  ['socket writes (+ waiting for a core after waking a peer)', (p) => p === '(socket writes)'],
  [
    'TypeORM + pg (building and running SQL)',
    (p) => ['typeorm', 'pg', 'pg-protocol', 'pg-pool', 'pg-types', 'postgres-array'].includes(p),
  ],
  [
    'validation (class-validator, class-transformer, validator)',
    (p) => ['class-validator', 'class-transformer', 'validator', 'libphonenumber-js'].includes(p),
  ],
  [
    'NestJS + rxjs (guards, interceptors, pipes)',
    (p) => p.startsWith('@nestjs/') || p === 'rxjs' || p === 'reflect-metadata',
  ],
  [
    'Fastify + pino (HTTP, per-request logger)',
    (p) =>
      /^(fastify|@fastify\/|find-my-way|light-my-request|avvio|pino|nestjs-pino|pino-http|fast-json-stringify|safe-stable-stringify|secure-json-parse|fast-redact|@pinojs\/)/.test(
        p,
      ),
  ],
  ['NATS (outbox relay, KV watch)', (p) => p.startsWith('@nats-io/')],
  [
    'card checks (card-validator, credit-card-type)',
    (p) => ['card-validator', 'credit-card-type'].includes(p),
  ],
  ['platform + payments + contracts code', (p) => p.startsWith('@byrd/') || p.startsWith('apps/')],
  ['node core (http, net, crypto, streams)', (p) => p === 'node core'],
  ['garbage collector', (p) => p === '(garbage collector)'],
  ['native / program', (p) => p === '(native, program)'],
];

// Goals of issue 17 (performance). The paced phase offers PACED_SHARE x the bare handler's req/s.
const PACED_SHARE = 0.6;
const GOAL_RATIO = 0.75;
const GOAL_P99_MS = 50;
/** CPU ms per request of every process under test (service, orders, edge, PostgreSQL, NATS). */
const GOAL_CPU_MS = 0.95;
const PACED = 'service via edge, paced';
/** The bare handler at the same paced rate: the latency floor of this machine, for comparison. */
const BARE_PACED = 'bare via edge, paced';
const DRAIN_TIMEOUT_MS = 120_000;
const ORDERS_DURABLE = 'orders-transactions';
const BARE_PREFIX = '/bench-bare/api/v2/payment';

function paymentBody() {
  const year = (new Date().getUTCFullYear() + 3) % 100;
  return JSON.stringify({
    type: 'card',
    amount: '25.00',
    currency: 'EUR',
    orderRef: 'bench-payment',
    redirectUrl: 'https://shop.example.com/return',
    card: {
      number: '5448280000000007',
      expiration: `12/${String(year).padStart(2, '0')}`,
      cvv: '123',
      holder: 'Ana Silva',
    },
  });
}

export async function run(args) {
  const settings = {
    durationS: positiveNumber('duration', args.duration),
    warmupS: Math.max(0, Number(args.warmup) || 0),
    connections: Math.round(positiveNumber('connections', args.connections)),
    direct: !args['no-direct'],
    bare3dsRow: Boolean(args['bare-3ds-row']),
    poolSize: args['pool-size'] ? String(Math.round(positiveNumber('pool-size', args['pool-size']))) : null,
    profile: Boolean(args.profile),
    quietWaitS: Math.max(0, Number(args['quiet-wait']) || 0),
    prefillRows: Math.max(0, Math.round(Number(args.prefill) || 0)),
    withOrders: !args['no-orders'],
    idempotencyKey: Boolean(args['idempotency-key']),
    serviceEnv: serviceEnvOf(args['service-env']),
  };
  const startedAt = new Date();
  let env;
  // Four phases through the edge (saturated and paced, service and bare), two more direct.
  const phaseCount = settings.direct ? 6 : 4;
  const budgetMs =
    240_000 +
    (settings.prefillRows / 1e6) * 240_000 +
    phaseCount * ((settings.warmupS + settings.durationS) * 1000 + 2 * DRAIN_TIMEOUT_MS);
  return guardedRun({
    name: 'payments',
    budgetMs,
    keepLogs: args['keep-logs'],
    measure,
    cleanup: async () => {
      if (!env) return;
      const problems = await env.cleanup();
      for (const problem of problems) note(`cleanup: ${problem}`);
      note(`dropped databases byrd_${env.run}_* and stream/KV ${env.streamName}, *_${env.run}`);
    },
  });

  async function measure({ group, logDir }) {
    step('Environment');
    const busyBefore = await machineBusyCores(1000);
    note(
      `machine: ${cpus().length} cores, ${round(busyBefore, 2)} cores busy before the run${busyBefore > 0.25 ? paint('1;33', ' (other work is running: results will be noisy)') : ''}`,
    );
    env = await BenchEnvironment.create();
    note(`run ${env.run}: databases byrd_${env.run}_{payments,orders,bare}, stream ${env.streamName}`);
    const [paymentsDb, ordersDb, bareDb] = [
      await env.database('payments'),
      await env.database('orders'),
      await env.database('bare'),
    ];
    await migrate(group, 'payments', paymentsDb);
    await migrate(group, 'orders', ordersDb);
    await migrate(group, 'payments', bareDb, 'bare-migrate'); // same tables for the bare handler
    if (settings.prefillRows > 0) {
      step(`Prefilling ${settings.prefillRows} rows of history into both databases`);
      const started = Date.now();
      await prefillPayments(paymentsDb, settings.prefillRows);
      await prefillPayments(bareDb, settings.prefillRows, { sessions: settings.bare3dsRow });
      note(`done in ${round((Date.now() - started) / 1000, 1)} s`);
    }
    const merchant = await env.createMerchant('Bench Merchant', 'sandbox');
    note(`sandbox merchant ${merchant.merchantId}`);

    step(`Starting ${settings.withOrders ? 'orders, ' : ''}payments, the bare handler and the edge`);
    const edgePort = await freePort();
    const edgeUrl = `http://127.0.0.1:${edgePort}`;
    const poolEnv = settings.poolSize ? { DATABASE_POOL_SIZE: settings.poolSize } : {};
    const orders = settings.withOrders
      ? await startService(
          group,
          'orders',
          await env.serviceEnv('orders', {
            port: await freePort(),
            extra: { PUBLIC_BASE_URL: edgeUrl, CHECKOUT_URL: `${edgeUrl}/checkout` },
          }),
        )
      : null;
    const profileDir = settings.profile
      ? join(RESULTS_DIR, `payments-${timestamp(startedAt)}-profile`)
      : null;
    const payments = await startService(
      group,
      'payments',
      await env.serviceEnv('payments', {
        port: await freePort(),
        extra: { PUBLIC_BASE_URL: edgeUrl, ...poolEnv, ...settings.serviceEnv },
      }),
      { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
    );
    const barePort = await freePort();
    const bare = group.startNode('bare', join(ROOT, 'bench/lib/bare-payments-server.mjs'), {
      env: {
        NODE_ENV: 'production',
        HTTP_PORT: String(barePort),
        HTTP_HOST: '127.0.0.1',
        DATABASE_URL: bareDb,
        BARE_3DS_ROW: String(settings.bare3dsRow),
        BARE_API_KEY_HASHES: JSON.stringify({
          [hashKey(merchant.apiKey)]: { merchantId: merchant.merchantId, mode: merchant.mode },
        }),
        ...poolEnv,
      },
    });
    bare.url = `http://127.0.0.1:${barePort}`;
    await waitForHttp(`${bare.url}/health/ready`, { managed: bare, what: 'the bare handler' });
    const ports = orders ? { payments: payments.port, orders: orders.port } : { payments: payments.port };
    const routesFile = writeRoutesFile(logDir, ports, [
      { prefix: BARE_PREFIX, service: 'bench-bare', port: barePort },
    ]);
    const edge = await startEdge(group, routesFile, { port: edgePort });
    note(
      `edge ${edge.url} -> payments :${payments.port}${orders ? `, orders :${orders.port}` : ''}, bare :${barePort} (${BARE_PREFIX})`,
    );

    const body = paymentBody();
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': merchant.apiKey,
    };
    if (settings.idempotencyKey) headers['idempotency-key'] = 'bench-[<id>]';
    const targets = {
      'service via edge': { kind: 'service', url: `${edge.url}/api/v2/payment` },
      'bare via edge': { kind: 'bare', url: `${edge.url}${BARE_PREFIX}` },
      // Offered PACED_SHARE x the bare handler's req/s (set once that phase ran): the latency a merchant
      // sees at a throughput the service should carry, rather than the queueing of a saturated closed loop.
      [PACED]: { kind: 'service', url: `${edge.url}/api/v2/payment`, rate: null },
      [BARE_PACED]: { kind: 'bare', url: `${edge.url}${BARE_PREFIX}`, rate: null },
      'service direct': { kind: 'service', url: `${payments.url}/api/v2/payment` },
      'bare direct': { kind: 'bare', url: `${bare.url}/api/v2/payment` },
    };

    step('Smoke test');
    const ledger = { service: { answered2xx: 0, inFlight: 0 }, bare: { answered2xx: 0, inFlight: 0 } };
    for (const [name, target] of Object.entries(targets)) {
      if ((!settings.direct && name.endsWith('direct')) || name.endsWith('paced')) continue;
      const smokeHeaders = settings.idempotencyKey
        ? { ...headers, 'idempotency-key': `bench-smoke-${name.replace(/ /g, '-')}` }
        : headers;
      const answer = await requestJson(target.url, { method: 'POST', headers: smokeHeaders, body });
      if (answer.status !== 201 || answer.body?.code !== 'BYRD200' || answer.body?.status !== 'Success') {
        fail(
          `${name}: POST ${target.url} answered ${answer.status} ${JSON.stringify(answer.body)}; expected 201 BYRD200 Success.`,
        );
      }
      ledger[target.kind].answered2xx++;
      note(`${name}: 201 ${answer.body.code} ${answer.body.status}`);
    }

    const paymentsPool = poolFor(paymentsDb, 2);
    const barePool = poolFor(bareDb, 1);
    const ordersPool = poolFor(ordersDb, 1);
    const monitorPool = poolFor(ordersDb, 1); // pg_stat_activity sees every database
    try {
      await waitForDrain(paymentsPool);
      const cpuGroups = {
        payments: payments.pid,
        orders: orders ? orders.pid : [],
        edge: edge.pid,
        bare: bare.pid,
        postgres: { comm: 'postgres' },
        'nats-server': { comm: 'nats-server' },
        'load-gen': 'self',
        machine: 'machine',
      };
      const phases = [];
      const profileWindows = [];
      const order = settings.direct
        ? ['service via edge', 'bare via edge', PACED, BARE_PACED, 'service direct', 'bare direct']
        : ['service via edge', 'bare via edge', PACED, BARE_PACED];
      for (const name of order) {
        const target = targets[name];
        if (name.endsWith('paced')) {
          const bareRps = phases.find((phase) => phase.name === 'bare via edge').result.rps;
          target.rate = Math.max(1, Math.round(PACED_SHARE * bareRps));
        }
        step(
          `${name}: ${settings.warmupS} s warm-up + ${settings.durationS} s at ${settings.connections} connections` +
            (target.rate ? `, offered ${target.rate} req/s (${PACED_SHARE} x bare via edge)` : ''),
        );
        const load = {
          rate: target.rate ?? undefined,
          url: target.url,
          connections: settings.connections,
          method: 'POST',
          headers,
          body,
          uniqueIds: settings.idempotencyKey,
        };
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        if (settings.warmupS > 0) {
          const warm = await (load.rate ? runPacedLoad : runLoad)({ ...load, seconds: settings.warmupS });
          ledger[target.kind].answered2xx += warm.status['2xx'];
          ledger[target.kind].inFlight += Math.max(0, warm.sent - warm.completed);
          if (target.kind === 'service') await waitForDrain(paymentsPool, orders ? ordersDurableIdle : null);
        }
        const rss = sampleRss({
          payments: payments.pid,
          ...(orders ? { orders: orders.pid } : {}),
          edge: edge.pid,
          bare: bare.pid,
        });
        const activity = sampleDbActivity(
          monitorPool,
          target.kind === 'service' ? dbName(paymentsDb) : dbName(bareDb),
        );
        const backlog = target.kind === 'service' ? sampleBacklog(paymentsPool) : null;
        const targetPool = target.kind === 'service' ? paymentsPool : barePool;
        const tablesBefore = await tableStats(targetPool);
        const before = cpuSnapshot(cpuGroups);
        const startUs = Number(process.hrtime.bigint() / 1000n);
        const result = await (load.rate ? runPacedLoad : runLoad)({ ...load, seconds: settings.durationS });
        const endUs = Number(process.hrtime.bigint() / 1000n);
        const cpu = cpuBetween(before, cpuSnapshot(cpuGroups));
        const peakRssMb = rss.stop();
        const db = await activity.stop();
        const backlogSeen = backlog ? await backlog.stop() : null;
        ledger[target.kind].answered2xx += result.status['2xx'];
        ledger[target.kind].inFlight += Math.max(0, result.sent - result.completed);
        let drain = null;
        if (target.kind === 'service') {
          profileWindows.push({ startUs, endUs });
          drain = await waitForDrain(paymentsPool, orders ? ordersDurableIdle : null);
          drain.maxBacklogDuringWindow = backlogSeen.max;
          drain.backlogSamples = backlogSeen.samples;
        }
        // Requests autocannon dropped at the end of the window may still be committing: let them finish.
        await settle(targetPool, merchant.merchantId);
        if (target.kind === 'service') await waitForDrain(paymentsPool, orders ? ordersDurableIdle : null);
        await sleep(1100); // table counters reach pg_stat_user_tables up to a second late
        const tables = tableStatsBetween(tablesBefore, await tableStats(targetPool));
        const phase = { name, ...target, result, cpu, peakRssMb, drain, db, tables };
        phases.push(phase);
        printPhaseLine(phase);
      }

      step('Ledger');
      const service = await countRows(paymentsPool, ['transactions', 'three_ds_sessions', 'outbox']);
      // The relay deletes what it published: every outbox row left is unpublished.
      const unpublished = service.outbox;
      const bareRows = await countRows(barePool, ['transactions', 'outbox']);
      const ordersInbox = orders
        ? Number(
            (await ordersPool.query('SELECT count(*) AS n FROM inbox WHERE consumer = $1', [ORDERS_DURABLE]))
              .rows[0].n,
          )
        : null;
      const stream = await env.streamState();
      const consumer = await env.consumerBacklog(ORDERS_DURABLE);
      const ledgerResult = {
        service: {
          ...ledger.service,
          rows: service,
          unpublishedOutbox: unpublished,
          streamMessages: stream.messages,
          ordersInbox,
          ordersConsumer: consumer,
          ok:
            between(service.transactions, ledger.service.answered2xx, ledger.service.inFlight) &&
            service.three_ds_sessions === service.transactions &&
            unpublished === 0 &&
            stream.messages === service.transactions &&
            // Orders acks every event; it records (inbox) only those of a payment with an order.
            (!orders || (consumer !== null && consumer.pending === 0 && consumer.ackPending === 0)),
        },
        bare: {
          ...ledger.bare,
          rows: bareRows,
          ok:
            between(bareRows.transactions, ledger.bare.answered2xx, ledger.bare.inFlight) &&
            bareRows.outbox === bareRows.transactions,
        },
      };

      const memory = {
        paymentsHwmMb: memoryOf(payments.pid)?.hwmMb ?? null,
        ordersHwmMb: orders ? (memoryOf(orders.pid)?.hwmMb ?? null) : null,
        edgeHwmMb: memoryOf(edge.pid)?.hwmMb ?? null,
        bareHwmMb: memoryOf(bare.pid)?.hwmMb ?? null,
      };

      // Stop now (before cleanup) so a CPU profile is written while the run's data still exists.
      await group.stopAll();
      let profile = null;
      if (profileDir) {
        const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
        if (file) {
          const summary = summariseProfile(join(profileDir, file), profileWindows);
          profile = {
            file: relative(ROOT, join(profileDir, file)),
            ...summary,
            byLayer: byLayer(summary, LAYERS),
          };
        } else {
          note(`no .cpuprofile was written in ${profileDir}`);
        }
      }

      const result = buildResult({
        settings,
        startedAt,
        env,
        phases,
        ledger: ledgerResult,
        memory,
        profile,
        payments,
        bare,
        busyBefore,
      });
      printReport(result);
      const file = writeResult('payments', result, startedAt);
      console.log(`\nJSON: ${file}`);
      return result;
    } finally {
      await Promise.all([paymentsPool.end(), barePool.end(), ordersPool.end(), monitorPool.end()]);
    }

    async function ordersDurableIdle() {
      if (!orders) return true;
      const backlog = await env.consumerBacklog(ORDERS_DURABLE);
      return backlog !== null && backlog.pending === 0 && backlog.ackPending === 0;
    }
  }
}

function hashKey(apiKey) {
  // As the platform's hashApiKey: SHA-256 of the trimmed, lower-cased key.
  return createHash('sha256').update(apiKey.trim().toLowerCase()).digest('hex');
}

/** Waits (at most `seconds`) until the machine is quiet: under 0.25 busy cores over one second. */
const between = (rows, answered, inFlight) => rows >= answered && rows <= answered + inFlight;

/** Rows of this run (prefilled history left out). */
async function countRows(pool, tables) {
  const filter = {
    transactions: 'merchant_id <> $1',
    three_ds_sessions: 'merchant_id <> $1',
    outbox: "payload->>'merchantId' <> $1",
  };
  const counts = {};
  for (const name of tables) {
    const { rows } = await pool.query(`SELECT count(*) AS n FROM ${name} WHERE ${filter[name]}`, [
      PREFILL_MERCHANT,
    ]);
    counts[name] = Number(rows[0].n);
  }
  return counts;
}

/** Waits (at most 15 s) until the transactions table stops growing for 300 ms. */
async function settle(pool, merchantId) {
  let last = -1;
  await pollUntil(
    async () => {
      const { rows } = await pool.query('SELECT count(*) AS n FROM transactions WHERE merchant_id = $1', [
        merchantId,
      ]);
      const now = Number(rows[0].n);
      const still = now === last;
      last = now;
      return still;
    },
    { timeoutMs: 15_000, intervalMs: 300 },
  );
}

async function pendingOutbox(pool) {
  return Number((await pool.query('SELECT count(*) AS n FROM outbox')).rows[0].n);
}

/**
 * Waits until every outbox row is published and (when given) the orders consumer is idle. Answers
 * { backlogAtEnd, outboxDrainMs, consumerCaughtUpMs } measured from the call (null = not within the limit).
 */
async function waitForDrain(pool, consumerIdle) {
  const start = performance.now();
  const backlogAtEnd = await pendingOutbox(pool);
  const drained = await pollUntil(async () => (await pendingOutbox(pool)) === 0, {
    timeoutMs: DRAIN_TIMEOUT_MS,
    intervalMs: 25,
  });
  const outboxDrainMs = drained ? performance.now() - start : null;
  let consumerCaughtUpMs = null;
  if (consumerIdle) {
    const idle = await pollUntil(consumerIdle, { timeoutMs: DRAIN_TIMEOUT_MS, intervalMs: 50 });
    consumerCaughtUpMs = idle ? performance.now() - start : null;
  }
  return { backlogAtEnd, outboxDrainMs, consumerCaughtUpMs };
}

/** Unpublished outbox rows, sampled every second during a measured window. */
function sampleBacklog(pool) {
  const samples = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sleep(1000);
      if (!stopped) samples.push(await pendingOutbox(pool).catch(() => null));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const values = samples.filter((v) => v !== null);
      return { samples: values, max: values.length ? Math.max(...values) : 0 };
    },
  };
}

function printPhaseLine({ name, result, drain }) {
  const parts = [
    `${round(result.rps)} req/s`,
    `p50 ${result.latencyMs.p50} ms`,
    `p99 ${result.latencyMs.p99} ms`,
    `2xx ${result.status['2xx']}`,
    `non-2xx ${result.status.non2xx}`,
    `errors ${result.errors}`,
  ];
  if (drain) parts.push(`outbox backlog ${drain.backlogAtEnd} drained in ${fmtMs(drain.outboxDrainMs)}`);
  note(`${name}: ${parts.join(', ')}`);
}

const fmtMs = (ms) => (ms === null ? 'not within the limit' : `${Math.round(ms)} ms`);

function buildResult({
  settings,
  startedAt,
  env,
  phases,
  ledger,
  memory,
  profile,
  payments,
  bare,
  busyBefore,
}) {
  const byName = Object.fromEntries(phases.map((phase) => [phase.name, phase]));
  const ratio = (a, b) => (byName[a] && byName[b] ? byName[a].result.rps / byName[b].result.rps : null);
  const edgeRatio = ratio('service via edge', 'bare via edge');
  const costRatio = (a, b) =>
    byName[a] && byName[b]
      ? platformMs(byName[b].cpu, byName[b].result) / platformMs(byName[a].cpu, byName[a].result)
      : null;
  const directRatio = ratio('service direct', 'bare direct');
  const paced = byName[PACED];
  const barePaced = byName[BARE_PACED];
  const pacedP99 = paced ? paced.result.latencyMs.p99 : null;
  // Sustained: (nearly) every scheduled request answered 2xx within the window's timeout.
  const pacedSustained = paced ? sustained(paced.result) : false;
  const cpuMsOf = (name) => (byName[name] ? platformMs(byName[name].cpu, byName[name].result) : null);
  const serviceCpuMs = cpuMsOf('service via edge');
  const bareCpuMs = cpuMsOf('bare via edge');
  return {
    benchmark: 'payments',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    run: env.run,
    machine: {
      cores: cpus().length,
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      busyCoresBeforeRun: round(busyBefore, 2),
    },
    git: TARGET_REVISION ? { ...TARGET_REVISION, snapshot: true } : gitState(),
    builds: distTimes(requires()),
    target: TARGET_ROOT === ROOT ? 'working tree' : TARGET_ROOT,
    settings: {
      ...settings,
      body: 'POST /api/v2/payment {type card, amount "25.00" EUR, card 5448280000000007}',
      idempotencyKey: settings.idempotencyKey
        ? 'a unique idempotency-key per request (service stores it; bare ignores it)'
        : 'none',
      service: `apps/payments/dist/main.js${settings.withOrders ? ' (+ apps/orders consuming transaction.>)' : ' alone (--no-orders: nobody consumes its events)'}, LOG_LEVEL=warn, NODE_ENV=production`,
      bare: `bench/lib/bare-payments-server.mjs: Fastify + pg, BEGIN; INSERT transactions;${settings.bare3dsRow ? ' INSERT three_ds_sessions;' : ''} INSERT outbox; COMMIT`,
      comparison:
        'headline ratio = service via edge / bare via edge (same edge process, so the proxy cost is on both sides); direct ratio without the edge',
      edge: 'deploy/local/edge.mjs, LOG_LEVEL=silent (no per-request access line)',
      poolSize: settings.poolSize ?? '10 (service default)',
      pids: { payments: payments.pid, bare: bare.pid },
    },
    phases: phases.map(({ name, kind, url, result, cpu, peakRssMb, drain, db, tables }) => ({
      name,
      kind,
      url,
      result,
      cpu: {
        wallSeconds: round(cpu.wallSeconds, 2),
        // Busy cores of the whole machine not used by the processes above: other work on the machine.
        otherCores: round(otherCores(cpu, MEASURED), 2),
        cores: Object.fromEntries(Object.entries(cpu.groups).map(([k, v]) => [k, round(v.cores, 3)])),
        msPerRequest: Object.fromEntries(
          Object.entries(cpu.groups).map(([k, v]) => [
            k,
            result.completed ? round((v.cpuSeconds * 1000) / result.completed, 3) : null,
          ]),
        ),
        // CPU of the system under test (not the load generator) per request, and the req/s that cost
        // allows on this machine's cores if nothing else ran: a noise-resistant second opinion.
        platformMsPerRequest: round(platformMs(cpu, result), 3),
        capacityRps: round((cpus().length * 1000) / platformMs(cpu, result)),
      },
      peakRssMb: Object.fromEntries(Object.entries(peakRssMb).map(([k, v]) => [k, round(v, 1)])),
      db,
      tables,
      drain: drain && {
        ...drain,
        outboxDrainMs: round(drain.outboxDrainMs),
        consumerCaughtUpMs: round(drain.consumerCaughtUpMs),
      },
    })),
    memory: Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, round(v, 1)])),
    ledger,
    ratios: {
      viaEdge: round(edgeRatio, 3),
      direct: round(directRatio, 3),
      cpuCostViaEdge: round(costRatio('service via edge', 'bare via edge'), 3),
      cpuCostDirect: round(costRatio('service direct', 'bare direct'), 3),
    },
    goals: [
      {
        name: 'throughput ratio service/bare via edge',
        actual: round(edgeRatio, 2),
        target: `>= ${GOAL_RATIO}`,
        pass: edgeRatio !== null && edgeRatio >= GOAL_RATIO,
      },
      {
        name: `p99 latency, service via edge at ${PACED_SHARE} x bare's req/s`,
        actual: paced
          ? `${pacedP99} ms at ${round(paced.result.rps)} req/s (offered ${paced.rate}${pacedSustained ? '' : ', not sustained'}` +
            `${barePaced ? `; the bare handler at the same rate: p99 ${barePaced.result.latencyMs.p99} ms` : ''})`
          : 'not measured',
        target: `< ${GOAL_P99_MS} ms, >= ${100 * (1 - PACED_SHORTFALL)} % of the offered requests answered 2xx`,
        pass: paced ? pacedP99 < GOAL_P99_MS && pacedSustained : null,
      },
      {
        name: 'CPU per request, every process under test, service via edge',
        actual:
          serviceCpuMs === null
            ? 'not measured'
            : `${round(serviceCpuMs, 2)} ms (bare ${round(bareCpuMs, 2)} ms)`,
        target: `<= ${GOAL_CPU_MS} ms`,
        pass: serviceCpuMs === null ? null : serviceCpuMs <= GOAL_CPU_MS,
      },
      {
        name: 'peak RSS of each service',
        actual: `payments ${round(memory.paymentsHwmMb)} MB${memory.ordersHwmMb === null ? '' : `, orders ${round(memory.ordersHwmMb)} MB`}`,
        target: `< ${GOAL_SERVICE_RSS_MB} MB`,
        pass:
          memory.paymentsHwmMb === null
            ? null
            : [memory.paymentsHwmMb, memory.ordersHwmMb].every(
                (mb) => mb === null || mb < GOAL_SERVICE_RSS_MB,
              ),
      },
    ],
    profile,
  };
}

const MEASURED = ['payments', 'orders', 'bare', 'edge', 'postgres', 'nats-server', 'load-gen'];

const PLATFORM = ['payments', 'orders', 'bare', 'edge', 'postgres', 'nats-server'];

/** CPU ms per completed request of the processes under test (everything but the load generator). */
function platformMs(cpu, result) {
  if (!result.completed) return NaN;
  return (
    (PLATFORM.reduce((sum, label) => sum + (cpu.groups[label]?.cpuSeconds ?? 0), 0) * 1000) / result.completed
  );
}

function printReport(result) {
  const { settings } = result;
  console.log(
    `\n${paint('1', 'payments')}  run ${result.run}  ${settings.connections} connections, ${settings.warmupS} s warm-up + ${settings.durationS} s measured per phase, ${result.machine.cores} cores, node ${result.machine.node}`,
  );
  console.log(`service: ${settings.service}`);
  if (settings.idempotencyKey !== 'none') console.log(`keys:    ${settings.idempotencyKey}`);
  console.log(`bare:    ${settings.bare} (pool ${settings.poolSize})`);
  console.log(`compare: ${settings.comparison}\n`);
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'req/s', value: (p) => round(p.result.rps) },
      { title: 'p50 ms', value: (p) => p.result.latencyMs.p50 },
      { title: 'p99 ms', value: (p) => p.result.latencyMs.p99 },
      { title: 'max ms', value: (p) => p.result.latencyMs.max },
      { title: '2xx', value: (p) => p.result.status['2xx'] },
      { title: 'non-2xx', value: (p) => p.result.status.non2xx },
      { title: 'errors', value: (p) => p.result.errors + p.result.timeouts },
      {
        title: 'peak RSS MB',
        value: (p) => (p.kind === 'service' ? p.peakRssMb.payments : p.peakRssMb.bare),
      },
      { title: 'edge RSS MB', value: (p) => (p.name.includes('edge') ? p.peakRssMb.edge : null) },
    ]),
  );
  console.log(
    '\nCPU per request (ms of CPU time per completed request; "sut ms" = all but the load generator;' +
      '\n"ours" = cores used by the processes of the run, "machine" = busy cores of the whole machine,' +
      '\n"other" = the difference: work of other processes)',
  );
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      ...MEASURED.map((label) => ({ title: label, value: (p) => p.cpu.msPerRequest[label] })),
      { title: 'sut ms', value: (p) => p.cpu.platformMsPerRequest },
      {
        title: 'ours',
        value: (p) =>
          round(
            MEASURED.reduce((sum, l) => sum + (p.cpu.cores[l] ?? 0), 0),
            2,
          ),
      },
      { title: 'machine', value: (p) => p.cpu.cores.machine },
      { title: 'other', value: (p) => p.cpu.otherCores },
    ]),
  );
  const noisy = result.phases.filter((p) => p.cpu.otherCores > 0.25);
  if (noisy.length) {
    console.log(
      paint(
        '1;33',
        `warning: other processes kept ${Math.max(...noisy.map((p) => p.cpu.otherCores))} cores busy during ${noisy.map((p) => p.name).join(', ')}: those numbers are noisy, run again on a quiet machine`,
      ),
    );
  }
  const drains = result.phases.filter((p) => p.drain);
  if (drains.length) {
    console.log('\nOutbox relay after each service window (backlog = unpublished rows)');
    console.log(
      table(drains, [
        { title: 'phase', value: (p) => p.name },
        { title: 'max backlog in window', value: (p) => p.drain.maxBacklogDuringWindow },
        { title: 'backlog at end', value: (p) => p.drain.backlogAtEnd },
        { title: 'drained in ms', value: (p) => p.drain.outboxDrainMs },
        { title: 'orders caught up in ms', value: (p) => p.drain.consumerCaughtUpMs },
      ]),
    );
  }
  console.log(
    '\nDatabase connections during each window (averages; pool = DATABASE_POOL_SIZE; waits of active backends)',
  );
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'open', value: (p) => p.db.connections.total },
      { title: 'active', value: (p) => p.db.connections.active },
      { title: 'idle in tx', value: (p) => p.db.connections.idleInTransaction },
      { title: 'idle', value: (p) => p.db.connections.idle },
      {
        title: 'idle in tx, after',
        align: 'left',
        value: (p) =>
          Object.entries(p.db.idleInTransactionAfter ?? {})
            .slice(0, 5)
            .map(([kind, n]) => `${kind} ${n}`)
            .join(', '),
      },
      {
        title: 'active backends wait on',
        align: 'left',
        value: (p) =>
          Object.entries(p.db.activeWaits)
            .slice(0, 3)
            .map(([wait, n]) => `${wait} ${n}`)
            .join(', '),
      },
    ]),
  );
  console.log(
    '\nTable work per phase (pg_stat_user_tables, from the window start until the backlog drained; rows per request)',
  );
  const tableRows = [];
  for (const p of result.phases) {
    for (const [name, t] of Object.entries(p.tables ?? {})) {
      const per = (v) => round(v / Math.max(1, p.result.completed), 2);
      tableRows.push({
        phase: p.name,
        table: name,
        seqScans: t.seq_scan,
        seqRowsRead: t.seq_tup_read,
        seqRowsPerRequest: per(t.seq_tup_read),
        ins: per(t.ins),
        upd: per(t.upd),
        del: per(t.del),
      });
    }
  }
  console.log(
    table(tableRows, [
      { title: 'phase', value: (r) => r.phase },
      { title: 'table', value: (r) => r.table, align: 'left' },
      { title: 'seq scans', value: (r) => r.seqScans },
      { title: 'rows read by seq scans', value: (r) => r.seqRowsRead },
      { title: 'per request', value: (r) => r.seqRowsPerRequest },
      { title: 'ins/req', value: (r) => r.ins },
      { title: 'upd/req', value: (r) => r.upd },
      { title: 'del/req', value: (r) => r.del },
    ]),
  );
  const { service, bare } = result.ledger;
  const verdict = (ok) => (ok ? paint('1;32', 'OK') : paint('1;31', 'MISMATCH'));
  console.log('\nLedger');
  console.log(
    `  service ${verdict(service.ok)}: ${service.rows.transactions} transactions for ${service.answered2xx} 2xx answers` +
      ` (+ up to ${service.inFlight} in flight when a window closed), ${service.rows.three_ds_sessions} 3DS sessions,` +
      ` ${service.unpublishedOutbox} outbox rows left unpublished, ${service.streamMessages} stream messages,` +
      (service.ordersInbox === null
        ? ' (orders not running)'
        : ` orders consumed all (pending ${service.ordersConsumer?.pending}, unacked ${service.ordersConsumer?.ackPending}; ${service.ordersInbox} with an order)`),
  );
  console.log(
    `  bare    ${verdict(bare.ok)}: ${bare.rows.transactions} transactions for ${bare.answered2xx} 2xx answers` +
      ` (+ up to ${bare.inFlight} in flight), ${bare.rows.outbox} outbox rows (no relay: they stay unpublished)`,
  );
  const m = result.memory;
  console.log(
    `\nPeak RSS (VmHWM, whole life): payments ${m.paymentsHwmMb} MB, orders ${m.ordersHwmMb ?? '-'} MB, edge ${m.edgeHwmMb} MB, bare ${m.bareHwmMb} MB`,
  );
  if (result.profile) {
    const p = result.profile;
    console.log(
      `\nCPU profile of payments (${p.file}; ${p.windowed ? 'measured service windows only' : 'whole life'}, ${round(p.busyMs)} ms busy)`,
    );
    console.log(
      'wall-clock samples of the main thread; "socket writes" also hold the time the thread waits for a core after' +
        '\nwaking a peer (postgres, the edge) on a saturated machine: read it as contention, the rest as cost',
    );
    console.log(
      table(p.byLayer, [
        { title: 'layer', value: (r) => r.name },
        { title: 'self %', value: (r) => round(r.share * 100, 1) },
      ]),
    );
    console.log('');
    console.log(
      table(p.byPackage.slice(0, 12), [
        { title: 'package', value: (r) => r.name },
        { title: 'self %', value: (r) => round(r.share * 100, 1) },
      ]),
    );
    console.log('');
    console.log(
      table(p.topFunctions.slice(0, 15), [
        { title: 'function', value: (r) => r.name },
        { title: 'where', value: (r) => r.where, align: 'left' },
        { title: 'self %', value: (r) => round(r.share * 100, 1) },
      ]),
    );
  }
  const r = result.ratios;
  console.log(`\nratio service/bare req/s: via edge ${r.viaEdge ?? '-'}, direct ${r.direct ?? '-'}`);
  console.log(
    `ratio from CPU cost per request (bare sut ms / service sut ms; what the req/s ratio tends to when CPU is the limit,` +
      ` less sensitive to other work on the machine): via edge ${r.cpuCostViaEdge ?? '-'}, direct ${r.cpuCostDirect ?? '-'}`,
  );
  const headline = result.phases.filter((p) => p.name.includes('via edge'));
  const noisyHeadline = headline.some((p) => p.cpu.otherCores > 0.25);
  for (const goal of result.goals)
    console.log(goalLine(goal) + (noisyHeadline ? paint('1;33', '  (noisy: other work ran meanwhile)') : ''));
}
