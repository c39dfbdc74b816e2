// `npm run bench -- webhooks`: the webhook service (apps/webhook-service/dist) delivering events
// published on this run's JetStream stream to a local receiver (answering 200 at once), then the cost
// of its claim query. Phases (webhooks/phases.ts): throughput, paced, delivery stage only, noisy
// neighbour; then the ledger (webhooks/ledger.ts: any mismatch makes the run VOID, exit code 1) and,
// with the service stopped, the claim statement at 10 000 and --future-rows future retries
// (webhooks/claim.ts). Goals in webhooks/result.ts.
import { poolFor, testingFile } from '../core/environment.js';
import { guardedRun, type RunContext } from '../core/guarded-run.js';
import { memoryOf } from '../core/proc-stats.js';
import { runMetadata, writeResult } from '../core/report.js';
import { flag, type Scenario } from '../core/scenario.js';
import { serviceMain, serviceMigrate } from '../core/stack.js';
import { round, step } from '../core/util.js';
import { claimFile, measureClaim, requireClaimExport } from '../webhooks/claim.js';
import { Publisher, contentFile, envelopeFile, loadContracts } from '../webhooks/events.js';
import { checkLedger, printLedger } from '../webhooks/ledger.js';
import { WEBHOOKS_OPTIONS, describeRun, settingsOf, type WebhooksSettings } from '../webhooks/options.js';
import { runDeliveryPhases } from '../webhooks/phases.js';
import type { Receiver } from '../webhooks/receiver.js';
import { printReport } from '../webhooks/report.js';
import { goalsOf, phaseResult } from '../webhooks/result.js';
import { SERVICE, smokeTest, startWebhooksStack } from '../webhooks/stack.js';

async function measure(
  context: RunContext,
  s: WebhooksSettings,
  startedAt: Date,
  inline: { receiver?: Receiver },
) {
  const { env, group } = context;
  const contracts = await loadContracts();
  const stack = await startWebhooksStack(context, s, inline);
  const publisher = new Publisher(env, contracts, stack.merchant.merchantId);
  const pool = poolFor(stack.databaseUrl, 2);
  const commits = poolFor(stack.databaseUrl, 1); // the commit probe
  try {
    await smokeTest(stack, publisher);
    const deliveries = await runDeliveryPhases(
      context,
      stack,
      publisher,
      { pool, commits },
      s,
      contracts.toPublicContent,
    );
    const { phases, noisy } = deliveries;
    step('Ledger');
    const ledger = await checkLedger(env, stack, publisher, pool, noisy, s.noisyRows);
    printLedger(ledger);
    const hwm = (pid: number) => round(memoryOf(pid)?.hwmMb ?? null, 1);
    const memory = {
      serviceHwmMb: hwm(stack.service.pid),
      receiverHwmMb: stack.receiverProcess ? hwm(stack.receiverProcess.pid) : null,
    };
    let claim = null;
    if (s.claim) {
      step('Claim query: stopping the webhook service (nobody claims meanwhile)');
      await group.stop(stack.service);
      claim = await measureClaim(
        stack.databaseUrl,
        { merchantId: stack.merchant.merchantId, settingsId: stack.settingsId },
        s,
      );
    }
    const results = phases.map(phaseResult);
    const result = {
      ...runMetadata('webhooks', startedAt, context.busyBefore, webhooks.requires()),
      run: env.id,
      settings: { ...s, describe: describeRun(s), pid: stack.service.pid },
      phases: results,
      memory,
      ledger,
      claim,
      goals: goalsOf(results, claim, memory.serviceHwmMb, s),
    };
    printReport(result);
    console.log(`\nJSON: ${writeResult('webhooks', result, startedAt)}`);
    if (!ledger.ok) process.exitCode = 1;
    return result;
  } finally {
    await Promise.all([pool.end(), commits.end()]);
  }
}

export const webhooks: Scenario = {
  options: WEBHOOKS_OPTIONS,
  requires: () => [
    serviceMain(SERVICE),
    serviceMigrate(SERVICE),
    envelopeFile(),
    contentFile(),
    testingFile(),
    ...[claimFile() ?? []].flat(),
  ],
  run(args) {
    const s = settingsOf(args);
    if (s.claim) requireClaimExport();
    const budgetMs =
      300_000 +
      (s.events / 100) * 1000 +
      s.durationS * 1000 * (s.noisy ? 5 : 3) +
      (s.noisy ? 120_000 : 0) +
      (s.claim ? (s.futureRows / 1e6) * 300_000 + s.claimRuns * 2 * 200 : 0);
    const startedAt = new Date();
    const inline: { receiver?: Receiver } = {};
    return guardedRun({
      name: 'webhooks',
      budgetMs,
      keepLogs: flag(args, 'keep-logs'),
      measure: (context) => measure(context, s, startedAt, inline),
      cleanup: async () => inline.receiver?.close(),
    });
  },
};
