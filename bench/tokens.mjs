// `npm run bench -- tokens`: token creation (POST /api/v2/tokens, a VISA card with the merchant's
// 3DS data, so the vault does its whole job: card checks, envelope encryption with a fresh data key,
// the keyed fingerprint and the insert) through the edge, next to the bare Fastify + pg handler of
// the payments benchmark behind the same edge, in one run.
//
//   - Every request stores a new card: `CustomReference` is unique per request (the same card for
//     the same customer would refresh one token instead).
//   - Phases one at a time (the machine has 2 cores): saturated (N connections, closed loop) for the
//     vault and the bare handler, then both paced at 0.6 x the vault's saturated req/s (open loop,
//     latency from each request's scheduled time): p50/p99 at a throughput the vault sustains.
//   - Ledger: card_tokens rows = 2xx answers (allowing requests in flight when a window closed), and
//     the card number appears nowhere in the vault's database dump; else the run is void.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
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
import { machineBusyCores, memoryOf, sampleRss, waitForQuietMachine } from './lib/proc-stats.mjs';
import { platformFiles } from './lib/platform.mjs';
import { GOAL_SERVICE_RSS_MB, goalLine, table, writeResult } from './lib/report.mjs';
import { ROOT, fail, gitState, note, paint, pollUntil, positiveNumber, round, step } from './lib/util.mjs';

export const description = 'token creation through the edge, next to the bare Fastify + pg handler';

export const options = {
  duration: { type: 'string', default: '10', help: 'measured seconds per phase' },
  warmup: { type: 'string', default: '3', help: 'warm-up seconds before each measured window' },
  connections: { type: 'string', default: '50', help: 'concurrent connections' },
  'quiet-wait': {
    type: 'string',
    default: '30',
    help: 'before each phase, wait up to this many seconds for other work on the machine to stop',
  },
  'keep-logs': { type: 'boolean', default: false, help: "keep the processes' logs (always kept on failure)" },
};

export const requires = () => [
  serviceMain('gateway-tokens'),
  serviceMigrate('gateway-tokens'),
  serviceMigrate('payments'),
  ...platformFiles(),
];

const PACED_RATIO = 0.6;
const BARE_PREFIX = '/bench-bare/api/v2/payment';
const CARD = '4242424242424242';

function tokenBody() {
  const year = String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0');
  return JSON.stringify({
    Type: 'Card',
    CustomReference: 'bench-[<id>]',
    Alias: 'Bench card',
    Card: {
      number: CARD,
      expiration: `12/${year}`,
      cvv: '123',
      holder: 'Ana Silva',
      aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
      eci: '05',
    },
  });
}

/** The payments benchmark's body for the bare handler (it writes a payment, whatever it is sent). */
function bareBody() {
  return JSON.stringify({
    type: 'card',
    amount: '25.00',
    currency: 'EUR',
    card: { number: '5448280000000007' },
  });
}

export async function run(args) {
  const settings = {
    durationS: positiveNumber('duration', args.duration),
    warmupS: Math.max(0, Number(args.warmup) || 0),
    connections: Math.round(positiveNumber('connections', args.connections)),
    quietWaitS: Math.max(0, Number(args['quiet-wait']) || 0),
  };
  const startedAt = new Date();
  let env;
  return guardedRun({
    name: 'tokens',
    budgetMs: 180_000 + 4 * (settings.warmupS + settings.durationS + settings.quietWaitS + 20) * 1000,
    keepLogs: args['keep-logs'],
    measure,
    cleanup: async () => {
      if (!env) return;
      for (const problem of await env.cleanup()) note(`cleanup: ${problem}`);
      note(`dropped databases byrd_${env.run}_* and stream/KV ${env.streamName}, *_${env.run}`);
    },
  });

  async function measure({ group, logDir }) {
    step('Environment');
    const busyBefore = await machineBusyCores(1000);
    note(`machine: ${cpus().length} cores, ${round(busyBefore, 2)} cores busy before the run`);
    env = await BenchEnvironment.create();
    const tokensDb = await env.database('gateway-tokens');
    const bareDb = await env.database('bare');
    await migrate(group, 'gateway-tokens', tokensDb);
    await migrate(group, 'payments', bareDb, 'bare-migrate'); // the bare handler writes payments' tables
    const merchant = await env.createMerchant('Bench Merchant', 'sandbox');

    step('Starting the vault, the bare handler and the edge');
    const tokens = await startService(
      group,
      'gateway-tokens',
      await env.serviceEnv('gateway-tokens', {
        port: await freePort(),
        extra: {
          VAULT_KEKS: `bench:${randomBytes(32).toString('base64')}`,
          VAULT_FINGERPRINT_KEY: randomBytes(32).toString('base64'),
        },
      }),
    );
    const barePort = await freePort();
    const bare = group.startNode('bare', join(ROOT, 'bench/lib/bare-payments-server.mjs'), {
      env: {
        NODE_ENV: 'production',
        HTTP_PORT: String(barePort),
        HTTP_HOST: '127.0.0.1',
        DATABASE_URL: bareDb,
        BARE_API_KEY_HASHES: JSON.stringify({
          [createHash('sha256').update(merchant.apiKey.trim().toLowerCase()).digest('hex')]: {
            merchantId: merchant.merchantId,
            mode: merchant.mode,
          },
        }),
      },
    });
    await waitForHttp(`http://127.0.0.1:${barePort}/health/ready`, {
      managed: bare,
      what: 'the bare handler',
    });
    const routesFile = writeRoutesFile(logDir, { 'gateway-tokens': tokens.port }, [
      { prefix: BARE_PREFIX, service: 'bench-bare', port: barePort },
    ]);
    const edge = await startEdge(group, routesFile);
    note(`edge ${edge.url} -> gateway-tokens :${tokens.port}, bare :${barePort} (${BARE_PREFIX})`);

    const headers = { 'content-type': 'application/json', 'x-api-key': merchant.apiKey };
    const targets = {
      vault: {
        url: `${edge.url}/api/v2/tokens`,
        body: tokenBody(),
        pool: poolFor(tokensDb, 1),
        table: 'card_tokens',
      },
      bare: {
        url: `${edge.url}${BARE_PREFIX}`,
        body: bareBody(),
        pool: poolFor(bareDb, 1),
        table: 'transactions',
      },
    };
    const answered = { vault: { ok: 0, inFlight: 0 }, bare: { ok: 0, inFlight: 0 } };

    step('Smoke test');
    for (const [kind, target] of Object.entries(targets)) {
      const answer = await requestJson(target.url, {
        method: 'POST',
        headers,
        body: target.body.replaceAll('[<id>]', 'smoke'),
      });
      if (answer.status !== 201)
        fail(`${kind}: POST ${target.url} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      answered[kind].ok++;
      note(
        `${kind}: 201${answer.body?.tokenId ? ` token ${answer.body.tokenId}, card ${answer.body.card.number}` : ''}`,
      );
    }

    try {
      const phases = [];
      const plan = [
        ['vault via edge', 'vault'],
        ['bare via edge', 'bare'],
        ['vault via edge, paced', 'vault'],
        ['bare via edge, paced', 'bare'],
      ];
      for (const [name, kind] of plan) {
        const target = targets[kind];
        const rate = name.endsWith('paced')
          ? Math.max(1, Math.round(PACED_RATIO * phases.find((p) => p.name === 'vault via edge').result.rps))
          : undefined;
        step(
          `${name}: ${settings.warmupS} s warm-up + ${settings.durationS} s${rate ? `, offered ${rate} req/s` : `, ${settings.connections} connections`}`,
        );
        const load = {
          url: target.url,
          connections: settings.connections,
          headers,
          body: target.body,
          rate,
          uniqueIds: true,
        };
        const runOnce = (seconds) => (rate ? runPacedLoad : runLoad)({ ...load, seconds });
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        if (settings.warmupS > 0) count(kind, await runOnce(settings.warmupS));
        const rss = sampleRss({ vault: tokens.pid, bare: bare.pid, edge: edge.pid });
        const result = await runOnce(settings.durationS);
        const peakRssMb = rss.stop();
        count(kind, result);
        await settle(target);
        phases.push({ name, kind, rate, result, peakRssMb });
        note(
          `${name}: ${round(result.rps)} req/s, p50 ${round(result.latencyMs.p50, 1)} ms, p99 ${round(result.latencyMs.p99, 1)} ms, 2xx ${result.status['2xx']}, non-2xx ${result.status.non2xx}, errors ${result.errors}`,
        );
      }

      step('Ledger');
      const rows = {};
      for (const [kind, target] of Object.entries(targets)) {
        rows[kind] = Number((await target.pool.query(`SELECT count(*) AS n FROM ${target.table}`)).rows[0].n);
      }
      const clearCardStored = execFileSync('pg_dump', ['--data-only', '--no-owner', tokensDb], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      }).includes(CARD);
      const ledger = Object.fromEntries(
        Object.keys(targets).map((kind) => [
          kind,
          {
            rows: rows[kind],
            answered2xx: answered[kind].ok,
            inFlight: answered[kind].inFlight,
            ok: rows[kind] >= answered[kind].ok && rows[kind] <= answered[kind].ok + answered[kind].inFlight,
          },
        ]),
      );
      ledger.vault.clearCardStored = clearCardStored;
      ledger.vault.ok &&= !clearCardStored;

      const byName = Object.fromEntries(phases.map((p) => [p.name, p]));
      const result = {
        benchmark: 'tokens',
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine: { cores: cpus().length, node: process.version, busyCoresBeforeRun: round(busyBefore, 2) },
        git: gitState(),
        settings: {
          ...settings,
          body: 'POST /api/v2/tokens, VISA 4242… with aav/eci, a new CustomReference per request',
          bare: 'bench/lib/bare-payments-server.mjs (the payments benchmark baseline) behind the same edge',
        },
        phases,
        ratio: byName['vault via edge'].result.rps / byName['bare via edge'].result.rps,
        peakRssMb: {
          vault: Math.max(...phases.map((p) => p.peakRssMb.vault ?? 0)),
          vaultHwm: memoryOf(tokens.pid)?.hwmMb ?? null,
        },
        ledger,
      };
      result.goals = goalsOf(result, byName);
      printReport(result);
      console.log(`\nJSON: ${writeResult('tokens', result, startedAt)}`);
      return result;
    } finally {
      await Promise.all(Object.values(targets).map((t) => t.pool.end()));
    }

    function count(kind, loadResult) {
      answered[kind].ok += loadResult.status['2xx'];
      answered[kind].inFlight += Math.max(0, loadResult.sent - loadResult.completed);
    }
  }
}

/** Waits until the target's table stops growing (requests cut off by a window may still commit). */
async function settle(target) {
  let last = -1;
  await pollUntil(
    async () => {
      const now = Number((await target.pool.query(`SELECT count(*) AS n FROM ${target.table}`)).rows[0].n);
      const still = now === last;
      last = now;
      return still;
    },
    { timeoutMs: 15_000, intervalMs: 300 },
  );
}

// Goals of issue 17 (performance).
const GOAL_RATIO = 0.65;
const GOAL_P99_MS = 50;

function goalsOf(result, byName) {
  const paced = byName['vault via edge, paced']?.result;
  const pacedSustained = paced ? sustained(paced) : false;
  return [
    {
      name: 'throughput ratio vault/bare via edge',
      actual: round(result.ratio, 2),
      target: `>= ${GOAL_RATIO}`,
      pass: result.ratio >= GOAL_RATIO,
    },
    {
      name: `p99 latency, vault via edge at ${PACED_RATIO} x its own req/s`,
      actual: paced
        ? `${paced.latencyMs.p99} ms at ${round(paced.rps)} req/s${pacedSustained ? '' : ', not sustained'}`
        : 'not measured',
      target: `< ${GOAL_P99_MS} ms, >= ${100 * (1 - PACED_SHORTFALL)} % of the offered requests answered 2xx`,
      pass: paced ? paced.latencyMs.p99 < GOAL_P99_MS && pacedSustained : null,
    },
    {
      name: 'peak RSS of the vault',
      actual: `${round(result.peakRssMb.vaultHwm ?? result.peakRssMb.vault)} MB`,
      target: `< ${GOAL_SERVICE_RSS_MB} MB`,
      pass: (result.peakRssMb.vaultHwm ?? result.peakRssMb.vault) < GOAL_SERVICE_RSS_MB,
    },
  ];
}

function printReport(result) {
  step('Result');
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'offered/s', value: (p) => p.rate ?? '-' },
      { title: 'req/s', value: (p) => round(p.result.rps) },
      { title: 'p50 ms', value: (p) => p.result.latencyMs.p50 },
      { title: 'p99 ms', value: (p) => p.result.latencyMs.p99 },
      { title: '2xx', value: (p) => p.result.status['2xx'] },
      { title: 'non-2xx', value: (p) => p.result.status.non2xx },
      {
        title: 'vault RSS MB',
        value: (p) => (p.kind === 'vault' ? round(p.peakRssMb.vault ?? NaN, 1) : null),
      },
    ]),
  );
  console.log(
    `\nvault / bare via edge: ${round(result.ratio, 2)} x; peak RSS of the vault ${round(result.peakRssMb.vault, 1)} MB (high-water mark ${round(result.peakRssMb.vaultHwm ?? NaN, 1)} MB)`,
  );
  for (const [kind, entry] of Object.entries(result.ledger)) {
    const verdict = entry.ok ? paint('1;32', 'OK  ') : paint('1;31', 'VOID');
    console.log(
      `${verdict} ledger ${kind}: ${entry.rows} rows for ${entry.answered2xx} 2xx answers (+${entry.inFlight} in flight)${entry.clearCardStored ? '; THE CARD NUMBER IS IN THE DATABASE' : ''}`,
    );
  }
  if (!Object.values(result.ledger).every((e) => e.ok)) note('the ledger does not balance: this run is void');
  for (const goal of result.goals) console.log(goalLine(goal));
}
