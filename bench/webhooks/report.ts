// The webhooks benchmark's report: phases, CPU per delivery, database connections, the stage that
// held each phase back, the noisy endpoint, the claim query, the ledger, memory and goal lines.
import { printGoals, warnNoisy, type Goal } from '../core/phase-runner.js';
import { table } from '../core/report.js';
import { paint } from '../core/util.js';
import { SMALL_FUTURE_ROWS, type ClaimResult } from './claim.js';
import { printLedger, type WebhooksLedger } from './ledger.js';
import { MEASURED, type PhaseResult } from './result.js';

export interface WebhooksReport {
  run: string;
  settings: { events: number; rate: number; durationS: number; describe: Record<string, string> };
  machine: { cores: number; node: string };
  phases: PhaseResult[];
  ledger: WebhooksLedger;
  claim: ClaimResult | null;
  memory: { serviceHwmMb: number | null; receiverHwmMb: number | null };
  goals: Goal[];
}

export function printReport(r: WebhooksReport): void {
  const { settings: s, describe: d } = { settings: r.settings, describe: r.settings.describe };
  console.log(
    `\n${paint('1', 'webhooks')}  run ${r.run}  ${s.events} events, then ${s.rate}/s for ${s.durationS} s, ${r.machine.cores} cores, node ${r.machine.node}`,
  );
  console.log(
    `service:  ${d.service}\nevents:   ${d.event}\nreceiver: ${d.receiver}\nlatency:  ${d.latency}\n`,
  );
  console.log(
    table(r.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'events', value: (p) => p.events },
      { title: 'delivered', value: (p) => p.delivered },
      { title: 'published/s', value: (p) => p.publishedPerSecond },
      { title: 'fan-out/s', value: (p) => p.fanOut.createdPerSecond },
      { title: 'delivered/s', value: (p) => p.deliveredPerSecond },
      { title: 'p50 ms', value: (p) => p.latencyMs.p50 },
      { title: 'p99 ms', value: (p) => p.latencyMs.p99 },
      { title: 'max ms', value: (p) => p.latencyMs.max },
      { title: 'dups', value: (p) => p.duplicates },
      { title: 'max undelivered', value: (p) => p.fanOut.maxUndelivered },
      { title: 'service RSS MB', value: (p) => p.peakRssMb['webhook-service'] },
    ]),
  );
  printCpuAndDatabase(r.phases);
  if (r.claim) printClaim(r.claim);
  console.log('\nLedger');
  printLedger(r.ledger);
  console.log(
    `\nPeak RSS (VmHWM, whole life): webhook service ${r.memory.serviceHwmMb} MB, receiver ${r.memory.receiverHwmMb ?? '-'} MB`,
  );
  printGoals(r.goals);
  if (!r.ledger.ok)
    console.log(paint('1;31', 'VOID  the ledger does not balance: the numbers above are not a valid result'));
}

function printCpuAndDatabase(phases: PhaseResult[]): void {
  console.log(
    '\nCPU per delivery (ms of CPU time per delivered webhook; "machine" = busy cores of the whole machine,' +
      '\n"other" = cores used by processes outside this run)',
  );
  console.log(
    table(phases, [
      { title: 'phase', value: (p) => p.name },
      ...MEASURED.map((label) => ({ title: label, value: (p: PhaseResult) => p.cpu.msPerDelivery[label] })),
      { title: 'service cores', value: (p) => p.cpu.cores['webhook-service'] },
      { title: 'machine', value: (p) => p.cpu.cores.machine },
      { title: 'other', value: (p) => p.cpu.otherCores },
    ]),
  );
  console.log(
    '\nDatabase connections of the service during each window (averages; waits of active backends)',
  );
  console.log(
    table(phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'open', value: (p) => p.db?.connections.total },
      { title: 'active', value: (p) => p.db?.connections.active },
      { title: 'idle in tx', value: (p) => p.db?.connections.idleInTransaction },
      {
        title: 'active backends wait on',
        align: 'left',
        value: (p) =>
          Object.entries(p.db?.activeWaits ?? {})
            .slice(0, 4)
            .map(([wait, n]) => `${wait} ${n}`)
            .join(', '),
      },
    ]),
  );
  for (const phase of phases) if (phase.limit) console.log(`limit of ${phase.name}: ${phase.limit}`);
  for (const { name, noisy: n } of phases)
    if (n)
      console.log(
        `${name}: the noisy endpoint got ${n.requestsDuringWindow} requests during the window; of its ` +
          `${n.rows} webhooks ${n.pending} are pending (${n.inFlight} in flight), ${n.failed} failed, ` +
          `${n.attempts} attempts in all; circuit ${n.circuit}`,
      );
  warnNoisy(phases);
}

function printClaim(c: ClaimResult): void {
  console.log(
    `\nClaim query (${c.statement}, ${c.perEndpoint ? `${c.limit} rows of one endpoint` : `limit ${c.limit}`}, rolled back after each run)`,
  );
  console.log(
    table(c.sizes, [
      { title: 'future retries', value: (r) => r.futureRows },
      { title: 'due', value: (r) => r.dueRows },
      { title: 'rows stored', value: (r) => r.storedRows },
      { title: 'due index MB', value: (r) => r.dueIndexMb },
      { title: 'runs', value: (r) => r.runs },
      { title: 'claimed', value: (r) => r.claimedPerRun },
      { title: 'p50 ms', value: (r) => r.latencyMs.p50 },
      { title: 'p99 ms', value: (r) => r.latencyMs.p99 },
      { title: 'max ms', value: (r) => r.latencyMs.max },
      { title: 'index', value: (r) => (r.plan.usesDueIndex ? c.dueIndex : 'NOT USED') },
      { title: 'machine cores', value: (r) => r.machineCoresDuring },
    ]),
  );
  for (const size of c.sizes) console.log(`  ${size.futureRows}: ${size.plan.summary.join(' | ')}`);
  console.log(
    `  ratio ${c.sizes.at(-1)?.futureRows}/${SMALL_FUTURE_ROWS}: p50 ${c.ratioP50}, p99 ${c.ratioP99}, mean ${c.ratioMean}`,
  );
  if (c.sizes.some((r) => r.runsClaimingOtherwise))
    console.log(paint('1;31', '  some runs claimed another number of rows than were due: look at the JSON'));
}
