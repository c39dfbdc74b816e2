// Prints a chaos run: the faults with their recovery and the client-visible failures they caused,
// the flows, the ledger checks, and the replicas that died on their own.
import { CAUSES } from './explain.mjs';
import { note, paint, step } from './lib/util.mjs';

const AFTER_FAULT_MS = 10_000;

const seconds = (ms) => (ms == null ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** The fault in effect when a flow failed (from its start to 10 s after it was lifted and ready). */
function faultOf(flow, timeline) {
  const at = flow.endedAt;
  const hit = timeline.find(
    (fault) =>
      flow.startedAt <= fault.liftedAt + (fault.recoveredMs ?? 0) + AFTER_FAULT_MS && at >= fault.startedAt,
  );
  return hit?.name ?? 'no fault';
}

export function printReport({
  settings,
  loadSeconds,
  drainMs,
  flows,
  timeline,
  ledger,
  explained = [],
  crashes,
  retries,
}) {
  const failures = flows.filter((flow) => !flow.ok);
  step('Faults');
  console.table(
    timeline.map((fault) => ({
      fault: fault.name,
      'recovered (s after lifted)': seconds(fault.recoveredMs),
      'replicas unready (most at once)': fault.unreadyReplicas,
      'requests retried': fault.retries,
      'client failures after retries': failures.filter((flow) => faultOf(flow, timeline) === fault.name)
        .length,
    })),
  );
  step(
    `Flows: ${flows.length} in ${loadSeconds.toFixed(0)} s (${settings.rate}/s), ${retries} retried requests, ${flows.skipped ?? 0} skipped`,
  );
  const byName = {};
  for (const flow of flows) {
    byName[flow.name] ??= { flow: flow.name, ok: 0, failed: 0 };
    byName[flow.name][flow.ok ? 'ok' : 'failed']++;
  }
  console.table(Object.values(byName));
  for (const flow of failures.slice(0, 10))
    note(`failed ${flow.name} (${faultOf(flow, timeline)}): ${flow.error}`);
  printExplained(explained);
  step(
    `Ledger (${ledger.figures.events} events on the stream, ${ledger.figures.webhooks} webhooks, drained in ${seconds(drainMs)})`,
  );
  console.table(
    ledger.checks.map(({ check, ok, figure, detail }) => ({
      check,
      result: ok ? 'ok' : 'FAIL',
      figure: String(figure),
      ...(detail ? { detail } : {}),
    })),
  );
  if (crashes.length > 0) {
    console.log(paint('1;31', `Replicas that died on their own: ${crashes.length}`));
    for (const crash of crashes)
      note(
        `${crash.replica} exited (${crash.signal ?? `code ${crash.code}`}) at ${new Date(crash.at).toISOString()}`,
      );
  } else note('No replica died on its own.');
  const lost = ledger.checks.filter((check) => !check.ok);
  console.log(
    lost.length === 0 && crashes.length === 0
      ? paint('1;32', 'PASS: nothing lost, nothing charged twice, nothing stuck.')
      : paint(
          '1;31',
          `FAIL: ${lost.map((check) => check.check).join('; ')}${crashes.length ? '; replicas crashed' : ''}`,
        ),
  );
}

/** Why the failed flows' payments ended as they did (chaos/explain.mjs), by cause. */
function printExplained(explained) {
  if (explained.length === 0) return;
  step(`Why ${explained.length} failed flows' payments ended as they did (their rows)`);
  const byCause = {};
  for (const { cause, flow } of explained) {
    byCause[cause] ??= { cause, flows: 0, names: new Set() };
    byCause[cause].flows++;
    byCause[cause].names.add(flow);
  }
  for (const { cause, flows, names } of Object.values(byCause))
    note(`${flows} (${[...names].join(', ')}): ${CAUSES[cause]}`);
  for (const one of explained.filter((e) => e.cause === 'other').slice(0, 5))
    note(`unexplained ${one.flow} ${one.transactionId}: ${JSON.stringify(one.row ?? 'no row')}`);
}
