// The tokens benchmark's ledger (card_tokens rows = 2xx answers, the card number nowhere in the
// vault's database), goals and report.
import { execFileSync } from 'node:child_process';
import type pg from 'pg';
import { describeCommits, type CommitLatency } from '../core/commit-probe.js';
import type { LoadResult } from '../core/load.js';
import { countOf } from '../core/environment.js';
import { loadTesting } from '../core/environment.js';
import { PACED_SHORTFALL, sustained } from '../core/paced-load.js';
import { printGoals, type Goal, type Measured } from '../core/phase-runner.js';
import { GOAL_SERVICE_RSS_MB, table } from '../core/report.js';
import { note, paint, round } from '../core/util.js';
import { CARD } from './stack.js';

export const PACED_RATIO = 0.6;
const GOAL_RATIO = 0.65;
const GOAL_P99_MS = 50;

export type Kind = 'vault' | 'bare';

export interface TokensWindow {
  kind: Kind;
  rate?: number;
  result: LoadResult;
}

/** A phase as the JSON file and the report show it. */
export type TokensPhase = TokensWindow & {
  name: string;
  peakRssMb: Record<string, number>;
  commits: CommitLatency | null;
};

export const flatten = ({ name, result, peakRssMb, commits }: Measured<TokensWindow>): TokensPhase => ({
  name,
  ...result,
  peakRssMb,
  commits,
});

export interface LedgerEntry {
  rows: number;
  answered2xx: number;
  inFlight: number;
  ok: boolean;
  clearCardStored?: boolean;
}

/** Rows of each target against its 2xx answers; the vault's also void when its dump holds the card. */
export async function checkLedger(
  targets: Record<Kind, { pool: pg.Pool; table: string }>,
  answered: Record<Kind, { ok: number; inFlight: number }>,
  vaultDatabase: string,
): Promise<Record<Kind, LedgerEntry>> {
  const entry = async (kind: Kind): Promise<LedgerEntry> => {
    const rows = await countOf(targets[kind].pool, `SELECT count(*) AS n FROM ${targets[kind].table}`);
    const { ok, inFlight } = answered[kind];
    return { rows, answered2xx: ok, inFlight, ok: rows >= ok && rows <= ok + inFlight };
  };
  const ledger = { vault: await entry('vault'), bare: await entry('bare') };
  const dump = execFileSync('pg_dump', ['--data-only', '--no-owner', vaultDatabase], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const { cardDataLeaks } = await loadTesting();
  ledger.vault.clearCardStored = cardDataLeaks({ vault: dump }, [CARD], []).length > 0;
  ledger.vault.ok &&= !ledger.vault.clearCardStored;
  return ledger;
}

export function goalsOf(phases: TokensPhase[], ratio: number, vaultMb: number): Goal[] {
  const pacedPhase = phases.find((p) => p.name === 'vault via edge, paced');
  const barePaced = phases.find((p) => p.name === 'bare via edge, paced');
  const paced = pacedPhase?.result;
  const pacedSustained = paced ? sustained(paced) : false;
  return [
    {
      name: 'throughput ratio vault/bare via edge',
      actual: round(ratio, 2),
      target: `>= ${GOAL_RATIO}`,
      pass: ratio >= GOAL_RATIO,
    },
    {
      name: `p99 latency, vault via edge at ${PACED_RATIO} x its own req/s`,
      actual: paced
        ? `${paced.latencyMs.p99} ms at ${round(paced.rps)} req/s${pacedSustained ? '' : ', not sustained'}` +
          ` (PostgreSQL: ${describeCommits(pacedPhase?.commits)}` +
          `${barePaced ? `, beside the bare handler ${describeCommits(barePaced.commits)}` : ''})`
        : 'not measured',
      target: `< ${GOAL_P99_MS} ms, >= ${100 * (1 - PACED_SHORTFALL)} % of the offered requests answered 2xx`,
      pass: paced ? Number(paced.latencyMs.p99) < GOAL_P99_MS && pacedSustained : null,
    },
    {
      name: 'peak RSS of the vault',
      actual: `${round(vaultMb)} MB`,
      target: `< ${GOAL_SERVICE_RSS_MB} MB`,
      pass: vaultMb < GOAL_SERVICE_RSS_MB,
    },
  ];
}

export function printReport(
  phases: TokensPhase[],
  r: {
    ratio: number;
    peakRssMb: { vault: number; vaultHwm: number | null };
    ledger: Record<Kind, LedgerEntry>;
    goals: Goal[];
  },
): void {
  console.log(
    table(phases, [
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
      { title: 'slowest commit ms', value: (p) => p.commits?.maxMs ?? null },
    ]),
  );
  console.log(
    `\nvault / bare via edge: ${round(r.ratio, 2)} x; peak RSS of the vault ${round(r.peakRssMb.vault, 1)} MB (high-water mark ${round(r.peakRssMb.vaultHwm ?? NaN, 1)} MB)`,
  );
  for (const [kind, entry] of Object.entries(r.ledger)) {
    const verdict = entry.ok ? paint('1;32', 'OK  ') : paint('1;31', 'VOID');
    console.log(
      `${verdict} ledger ${kind}: ${entry.rows} rows for ${entry.answered2xx} 2xx answers (+${entry.inFlight} in flight)${entry.clearCardStored ? '; THE CARD NUMBER IS IN THE DATABASE' : ''}`,
    );
  }
  if (!Object.values(r.ledger).every((e) => e.ok)) note('the ledger does not balance: this run is void');
  printGoals(r.goals);
}
