// `npm run bench -- payments`: frictionless card payments (POST /api/v2/payment, card
// 5448280000000007, "25.00" EUR, a sandbox merchant's x-api-key) at N connections, against the
// payments service (orders consuming its events) and a bare Fastify + pg handler doing the same
// writes, both through one edge process (so the headline ratio measures the service, not the proxy),
// then directly. Phases: payments/windows.ts; ledger: payments/ledger.ts; goals: payments/result.ts.
import { poolFor, testingFile } from '../core/environment.js';
import { guardedRun, type RunContext } from '../core/guarded-run.js';
import { memoryOf } from '../core/proc-stats.js';
import { runMetadata, writeResult } from '../core/report.js';
import { flag, list, text, type Args, type Scenario } from '../core/scenario.js';
import { serviceMain, serviceMigrate } from '../core/stack.js';
import { atLeastZero, positiveNumber, round, serviceEnvOf, step } from '../core/util.js';
import { ORDERS_DURABLE, checkLedger } from '../payments/ledger.js';
import { PAYMENTS_OPTIONS } from '../payments/options.js';
import { paymentsProfile } from '../payments/profile.js';
import { printReport } from '../payments/report.js';
import { paymentRequest, smokeTest } from '../payments/request.js';
import { describeRun, goalsOf, phaseResult, ratiosOf } from '../payments/result.js';
import { startPaymentsStack, type PaymentsStack } from '../payments/stack.js';
import { runWindows, type Answered } from '../payments/windows.js';

const DRAIN_TIMEOUT_MS = 120_000;

function settingsOf(args: Args) {
  const pool = text(args, 'pool-size');
  return {
    durationS: positiveNumber('duration', text(args, 'duration')),
    warmupS: atLeastZero(text(args, 'warmup')),
    connections: Math.round(positiveNumber('connections', text(args, 'connections'))),
    direct: !flag(args, 'no-direct'),
    pacedShare: positiveNumber('paced-share', text(args, 'paced-share')),
    bare3dsRow: flag(args, 'bare-3ds-row'),
    poolSize: pool ? String(Math.round(positiveNumber('pool-size', pool))) : null,
    profile: flag(args, 'profile'),
    quietWaitS: atLeastZero(text(args, 'quiet-wait')),
    prefillRows: Math.round(atLeastZero(text(args, 'prefill'))),
    withOrders: !flag(args, 'no-orders'),
    idempotencyKey: flag(args, 'idempotency-key'),
    serviceEnv: serviceEnvOf(list(args, 'service-env')),
  };
}

type Settings = ReturnType<typeof settingsOf>;

/** Peak RSS over each process's whole life (VmHWM), read before it stops. */
function memoryOfStack({ payments, orders, edge, bare }: PaymentsStack) {
  const hwm = (pid: number | undefined) => (pid === undefined ? null : round(memoryOf(pid)?.hwmMb, 1));
  return {
    paymentsHwmMb: hwm(payments.pid),
    ordersHwmMb: hwm(orders?.pid),
    edgeHwmMb: hwm(edge.pid),
    bareHwmMb: hwm(bare.pid),
  };
}

async function measure(context: RunContext, s: Settings, startedAt: Date) {
  const { env, group } = context;
  const stack = await startPaymentsStack(context, s, startedAt);
  const request = paymentRequest(stack.merchant.apiKey, s.idempotencyKey);
  const answered: Answered = {
    service: { answered2xx: 0, inFlight: 0 },
    bare: { answered2xx: 0, inFlight: 0 },
  };
  await smokeTest(stack, s.direct, request, answered);
  const pools = {
    payments: poolFor(stack.db.payments, 2),
    bare: poolFor(stack.db.bare, 1),
    orders: stack.orders ? poolFor(stack.db.orders, 1) : null,
  };
  const monitor = poolFor(stack.db.orders, 1); // pg_stat_activity sees every database
  const commits = poolFor(stack.db.orders, 1); // the WAL, and so its flushes, are the server's
  try {
    const ordersIdle = stack.orders ? () => env.consumerIdle(ORDERS_DURABLE) : undefined;
    const windows: { startUs: number; endUs: number }[] = [];
    const measured = await runWindows(
      stack,
      s,
      { ...pools, monitor, commits, ordersIdle },
      request,
      answered,
      windows,
    );
    step('Ledger');
    const ledger = await checkLedger(env, pools, answered);
    const memory = memoryOfStack(stack);
    // Stop now (before cleanup) so a CPU profile is written while the run's data still exists.
    await group.stopAll();
    const profile = stack.profileDir ? paymentsProfile(stack.profileDir, windows) : null;
    const phases = measured.map(phaseResult);
    const describe = describeRun(s);
    const result = {
      ...runMetadata('payments', startedAt, context.busyBefore, payments.requires()),
      run: env.id,
      settings: { ...s, ...describe, pids: { payments: stack.payments.pid, bare: stack.bare.pid } },
      phases,
      memory,
      ledger,
      ratios: ratiosOf(phases),
      goals: goalsOf(phases, memory, s.pacedShare),
      profile,
    };
    printReport({ ...result, describe });
    console.log(`\nJSON: ${writeResult('payments', result, startedAt)}`);
    return result;
  } finally {
    await Promise.all([
      pools.payments.end(),
      pools.bare.end(),
      pools.orders?.end(),
      monitor.end(),
      commits.end(),
    ]);
  }
}

export const payments: Scenario = {
  options: PAYMENTS_OPTIONS,
  requires: () => [
    serviceMain('payments'),
    serviceMigrate('payments'),
    serviceMain('orders'),
    serviceMigrate('orders'),
    testingFile(),
  ],
  run(args) {
    const s = settingsOf(args);
    const phaseCount = s.direct ? 6 : 4; // four phases through the edge, two more direct
    const budgetMs =
      240_000 +
      (s.prefillRows / 1e6) * 240_000 +
      phaseCount * ((s.warmupS + s.durationS) * 1000 + 2 * DRAIN_TIMEOUT_MS);
    const startedAt = new Date();
    return guardedRun({
      name: 'payments',
      budgetMs,
      keepLogs: flag(args, 'keep-logs'),
      measure: (context) => measure(context, s, startedAt),
    });
  },
};
