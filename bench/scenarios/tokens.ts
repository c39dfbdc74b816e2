// `npm run bench -- tokens`: token creation (POST /api/v2/tokens, a VISA card with the merchant's 3DS
// data, so the vault does its whole job: card checks, envelope encryption with a fresh data key, the
// keyed fingerprint and the insert) through the edge, next to the payments benchmark's bare handler
// behind the same edge. Four phases: both saturated, then both paced at 0.6 x the vault's req/s.
// Ledger: card_tokens rows = 2xx answers, and the card number nowhere in the vault's database.
import { poolFor, testingFile } from '../core/environment.js';
import { guardedRun, type RunContext } from '../core/guarded-run.js';
import type { LoadResult } from '../core/load.js';
import { memoryOf } from '../core/proc-stats.js';
import { runMetadata, writeResult } from '../core/report.js';
import { PHASE_OPTIONS, flag, text, type Args, type Scenario } from '../core/scenario.js';
import { BARE_PREFIX } from '../core/bare-handler.js';
import { serviceMain, serviceMigrate } from '../core/stack.js';
import { atLeastZero, positiveNumber, step } from '../core/util.js';
import { bareBody, startTokensStack, tokenBody } from '../tokens/stack.js';
import { runTokenWindows, smokeTest } from '../tokens/windows.js';
import { checkLedger, goalsOf, printReport, type Kind } from '../tokens/result.js';

const settingsOf = (args: Args) => ({
  durationS: positiveNumber('duration', text(args, 'duration')),
  warmupS: atLeastZero(text(args, 'warmup')),
  connections: Math.round(positiveNumber('connections', text(args, 'connections'))),
  quietWaitS: atLeastZero(text(args, 'quiet-wait')),
});

type Settings = ReturnType<typeof settingsOf>;

async function measure(context: RunContext, s: Settings, startedAt: Date) {
  const stack = await startTokensStack(context);
  const headers = { 'content-type': 'application/json', 'x-api-key': stack.merchant.apiKey };
  const targets = {
    vault: {
      url: `${stack.edge.url}/api/v2/tokens`,
      body: tokenBody(),
      pool: poolFor(stack.db.tokens, 1),
      table: 'card_tokens',
    },
    bare: {
      url: `${stack.edge.url}${BARE_PREFIX}`,
      body: bareBody(),
      pool: poolFor(stack.db.bare, 1),
      table: 'transactions',
    },
  };
  const commits = poolFor(stack.db.bare, 1); // the commit probe: the WAL is the server's
  const answered = { vault: { ok: 0, inFlight: 0 }, bare: { ok: 0, inFlight: 0 } };
  const count = (kind: Kind, result: LoadResult) => {
    answered[kind].ok += result.status['2xx'];
    answered[kind].inFlight += Math.max(0, result.sent - result.completed);
  };
  try {
    await smokeTest(targets, headers, answered);
    const phases = await runTokenWindows(stack, s, targets, commits, headers, count);
    step('Ledger');
    const ledger = await checkLedger(targets, answered, stack.db.tokens);
    const byName = new Map(phases.map((p) => [p.name, p]));
    const ratio =
      Number(byName.get('vault via edge')?.result.rps) / Number(byName.get('bare via edge')?.result.rps);
    const peakRssMb = {
      vault: Math.max(...phases.map((p) => p.peakRssMb.vault ?? 0)),
      vaultHwm: memoryOf(stack.vault.pid)?.hwmMb ?? null,
    };
    const result = {
      ...runMetadata('tokens', startedAt, context.busyBefore, tokens.requires()),
      settings: {
        ...s,
        body: 'POST /api/v2/tokens, VISA 4242… with aav/eci, a new CustomReference per request',
        bare: 'bench/core/bare-payments-server.ts (the payments benchmark baseline) behind the same edge',
      },
      phases,
      ratio,
      peakRssMb,
      ledger,
      goals: goalsOf(phases, ratio, peakRssMb.vaultHwm ?? peakRssMb.vault),
    };
    step('Result');
    printReport(phases, result);
    console.log(`\nJSON: ${writeResult('tokens', result, startedAt)}`);
    return result;
  } finally {
    await Promise.all([...Object.values(targets).map((t) => t.pool.end()), commits.end()]);
  }
}

export const tokens: Scenario = {
  options: {
    duration: { type: 'string', default: '10', help: 'measured seconds per phase' },
    warmup: { type: 'string', default: '3', help: 'warm-up seconds before each measured window' },
    connections: { type: 'string', default: '50', help: 'concurrent connections' },
    ...PHASE_OPTIONS,
  },
  requires: () => [
    serviceMain('gateway-tokens'),
    serviceMigrate('gateway-tokens'),
    serviceMigrate('payments'),
    testingFile(),
  ],
  run(args) {
    const s = settingsOf(args);
    const budgetMs = 180_000 + 4 * (s.warmupS + s.durationS + s.quietWaitS + 20) * 1000;
    const startedAt = new Date();
    return guardedRun({
      name: 'tokens',
      budgetMs,
      keepLogs: flag(args, 'keep-logs'),
      measure: (c) => measure(c, s, startedAt),
    });
  },
};
