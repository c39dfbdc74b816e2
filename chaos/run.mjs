#!/usr/bin/env node
// npm run chaos: proves "never loses an event" end to end while things fail (issue 16).
//
//   npm run chaos                 the full run: ~8 minutes of load, every fault of the plan
//   npm run chaos -- --quick      ~2 minutes, one fault of each kind; exits 1 on any loss (npm test runs it)
//   npm run chaos -- --help
//
// Owns its world: a PostgreSQL cluster and a nats-server of its own (ports and folders of its own,
// removed at the end, also on Ctrl-C), two replicas of every service from their dist/ folders
// behind balancers and the edge, and a webhook receiver. Drives merchant flows with idempotency
// keys and retries while it kills replicas, stops NATS, restarts PostgreSQL and breaks the
// receiver; then lets the platform drain and checks the ledger (chaos/ledger.mjs).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './lib/build.mjs';
import { ProcessGroup } from './lib/processes.mjs';
import { serviceMain, serviceMigrate } from './lib/stack.mjs';
import { platformFiles } from './lib/platform.mjs';
import { BenchError, RESULTS_DIR, note, paint, pollUntil, sleep, step, timestamp } from './lib/util.mjs';
import { SERVICES, WITH_DATABASE, createWorld, destroyWorld } from './world.mjs';
import { faultPlan, runFaults } from './faults.mjs';
import { startLoad } from './load.mjs';
import { checkLedger, checksMissingSabotage } from './ledger.mjs';
import { explainFailures } from './explain.mjs';
import { printReport } from './report.mjs';

const OPTIONS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'one fault of each kind, short outages; exit 1 on any loss',
  },
  rate: { type: 'string', help: 'merchant flows started per second (default 20, quick 8)' },
  replicas: { type: 'string', default: '2', help: 'replicas of every service' },
  only: {
    type: 'string',
    help: "only the faults whose name matches this regular expression (e.g. 'payments replica')",
  },
  'keep-logs': {
    type: 'boolean',
    default: false,
    help: "keep the processes' logs (always kept when a check fails)",
  },
  help: { type: 'boolean', short: 'h', default: false, help: 'this text' },
};

function usage() {
  const lines = ['Usage: npm run chaos -- [options]', '', 'Options:'];
  for (const [name, option] of Object.entries(OPTIONS))
    lines.push(`  --${`${name}${option.type === 'string' ? ' <n>' : ''}`.padEnd(16)} ${option.help}`);
  return lines.join('\n');
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({ options: OPTIONS, strict: true }));
  } catch (error) {
    console.error(`${error.message}\n\n${usage()}`);
    return 2;
  }
  if (values.help) {
    console.log(usage());
    return 0;
  }
  const quick = values.quick;
  const settings = {
    quick,
    rate: Number(values.rate ?? (quick ? 8 : 20)),
    replicas: Number(values.replicas),
    outageMs: quick ? 10_000 : 30_000,
    databaseDownMs: quick ? 5_000 : 10_000,
    // Past the world's leases (idempotency keys and webhook deliveries 15 s, the acquirer's recovery
    // 10 s); the full run also past JetStream's 30 s ack wait, so events a paused replica had taken
    // are redelivered to the other, and applied again when the paused one wakes.
    pauseMs: quick ? 20_000 : 35_000,
    recoveryMs: quick ? 5_000 : 20_000,
    warmupMs: quick ? 5_000 : 20_000,
  };
  if (!(settings.rate > 0) || !(settings.replicas >= 1))
    throw new BenchError('--rate and --replicas must be positive numbers.');
  const plan = faultPlan(settings).filter(
    (fault) => !values.only || new RegExp(values.only).test(fault.name),
  );
  if (plan.length === 0) throw new BenchError(`--only ${values.only} matches no fault of the plan.`);
  await ensureBuilt([...SERVICES.map(serviceMain), ...WITH_DATABASE.map(serviceMigrate), ...platformFiles()]);

  const dir = mkdtempSync(join(tmpdir(), 'byrd-chaos-'));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir);
  const world = { group: new ProcessGroup(logDir) };
  let failedChecks = true;
  let interrupted = null;
  const onSignal = (signal) => {
    interrupted = signal;
    console.error(`\nInterrupted (${signal}); stopping what this run started.`);
    cleanup().finally(() => process.exit(130));
  };
  let cleaned = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      step("Stopping and removing the run's world");
      await destroyWorld(world);
      if ((failedChecks && !interrupted) || values['keep-logs']) {
        rmSync(join(dir, 'pgdata'), { recursive: true, force: true });
        rmSync(join(dir, 'nats'), { recursive: true, force: true });
        note(`logs kept in ${dir}`);
      } else rmSync(dir, { recursive: true, force: true });
    })());
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    await createWorld(world, { dir, logDir, replicas: settings.replicas });
    step(
      `Load: ${settings.rate} flows/s; ${plan.length} faults, ${settings.outageMs / 1000} s outages, ${settings.recoveryMs / 1000} s of calm after each`,
    );
    const load = (world.load = startLoad(world.client, settings.rate));
    const startedAt = Date.now();
    await sleep(settings.warmupMs);
    const timeline = await runFaults(plan, world, { recoveryMs: settings.recoveryMs, log: note });
    await sleep(settings.warmupMs);
    step('Stopping the load; waiting for the flows in flight and for the platform to drain');
    const flows = await load.stop();
    const loadSeconds = (Date.now() - startedAt) / 1000;
    const drainMs = await drain(world);
    note(
      drainMs === null
        ? `did not drain within 180 s (${world.drainError ?? 'work left'})`
        : `drained in ${(drainMs / 1000).toFixed(1)} s`,
    );
    step('Checking the ledger');
    const ledgerInput = {
      postgres: world.postgres,
      dbs: world.dbs,
      nats: world.natsClient,
      streamName: 'EVENTS',
      receiver: world.receiver,
      flows: flows.filter((flow) => flow.ok),
      merchantId: world.merchantId,
    };
    const ledger = await checkLedger(ledgerInput);
    // Read before the world (and its database) is removed: why each failed flow's payment ended so.
    const explained = await explainFailures({ postgres: world.postgres, dbs: world.dbs, flows, timeline });
    const crashes = world.supervisor.replicas.flatMap((replica) =>
      replica.crashes.map((crash) => ({ replica: replica.name, ...crash })),
    );
    const report = {
      settings,
      loadSeconds,
      drainMs,
      flows,
      timeline,
      ledger,
      explained,
      crashes,
      retries: world.client.retries,
      dir,
    };
    printReport(report);
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `chaos-${timestamp()}.json`);
    writeFileSync(file, `${JSON.stringify({ ...report, flows: summariseFlows(flows) }, null, 2)}\n`);
    note(`results: ${file}`);
    failedChecks = ledger.checks.some((check) => !check.ok) || crashes.length > 0;
    if (quick) {
      // The checks must be able to fail: lose a webhook and un-pay an order on purpose, check again.
      const blind = await checksMissingSabotage(ledgerInput);
      if (blind.length > 0) {
        console.error(paint('1;31', `The ledger did not notice the sabotage: ${blind.join('; ')}`));
        failedChecks = true;
      } else note('ledger self-check: a deleted webhook and an un-paid order were both noticed');
    }
    return quick && failedChecks ? 1 : 0;
  } finally {
    await cleanup();
  }
}

/** Waits until nothing is left to publish, consume or deliver; answers the milliseconds it took. */
async function drain(world) {
  const since = Date.now();
  const { postgres, dbs } = world;
  const ok = await pollUntil(
    async () => {
      try {
        for (const db of Object.values(dbs)) {
          const [{ n }] = await postgres.query(`SELECT count(*)::int AS n FROM outbox`, [], db);
          if (n > 0) return false;
        }
        const [pending] = await postgres.query(
          `SELECT count(*)::int AS w FROM webhooks WHERE status = 'pending'`,
          [],
          dbs['webhook-service'],
        );
        const [processing] = await postgres.query(
          `SELECT count(*)::int AS n FROM transactions WHERE status = 'Processing'`,
          [],
          dbs.payments,
        );
        return pending.w === 0 && processing.n === 0;
      } catch (error) {
        world.drainError = error.message; // PostgreSQL may still be coming back: ask again
        return false;
      }
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  );
  await sleep(2_000); // the consumers' last acks
  return ok ? Date.now() - since : null;
}

function summariseFlows(flows) {
  return flows.map(({ name, ok, error, transactionId, startedAt, endedAt }) => ({
    name,
    ok,
    error,
    transactionId,
    startedAt,
    endedAt,
  }));
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(error instanceof BenchError ? paint('1;31', error.message) : error);
    process.exitCode = 1;
  },
);
