// The tokens benchmark's phases: the vault and the bare handler via the edge, saturated, then paced at
// PACED_RATIO x the vault's saturated req/s; after each window the target's rows settle.
import type pg from 'pg';
import { countOf, settle } from '../core/environment.js';
import { offer, type LoadResult } from '../core/load.js';
import { runPhase } from '../core/phase-runner.js';
import { requestJson } from '../core/stack.js';
import { fail, note, round, step } from '../core/util.js';
import { PACED_RATIO, flatten, type Kind, type TokensPhase } from './result.js';
import type { TokensStack } from './stack.js';

const PLAN: [string, Kind][] = [
  ['vault via edge', 'vault'],
  ['bare via edge', 'bare'],
  ['vault via edge, paced', 'vault'],
  ['bare via edge, paced', 'bare'],
];

export type Targets = Record<Kind, { url: string; body: string; pool: pg.Pool; table: string }>;

export async function runTokenWindows(
  stack: TokensStack,
  s: { durationS: number; warmupS: number; connections: number; quietWaitS: number },
  targets: Targets,
  commits: pg.Pool,
  headers: Record<string, string>,
  count: (kind: Kind, result: LoadResult) => void,
): Promise<TokensPhase[]> {
  const phases: TokensPhase[] = [];
  const probes = {
    cpu: {},
    rss: { vault: stack.vault.pid, bare: stack.bare.pid, edge: stack.edge.pid },
    commits,
  };
  for (const [name, kind] of PLAN) {
    const target = targets[kind];
    const vaultRps = phases.find((p) => p.name === 'vault via edge')?.result.rps ?? 0;
    const rate = name.endsWith('paced') ? Math.max(1, Math.round(PACED_RATIO * vaultRps)) : undefined;
    const load = {
      url: target.url,
      connections: s.connections,
      headers,
      body: target.body,
      rate,
      uniqueIds: true,
    };
    const measured = await runPhase(
      {
        name,
        load: { seconds: s.durationS, warmupSeconds: s.warmupS, connections: s.connections, rate },
        warmUp: async () =>
          s.warmupS > 0 ? count(kind, await offer({ ...load, seconds: s.warmupS })) : undefined,
        measure: () => offer({ ...load, seconds: s.durationS }),
        after: async (result) => {
          count(kind, result);
          await settle(() => countOf(target.pool, `SELECT count(*) AS n FROM ${target.table}`));
          return { kind, rate, result };
        },
      },
      probes,
      s.quietWaitS,
    );
    const phase = flatten(measured);
    phases.push(phase);
    const { rps, latencyMs, status, errors } = phase.result;
    note(
      `${name}: ${round(rps)} req/s, p50 ${round(latencyMs.p50, 1)} ms, p99 ${round(latencyMs.p99, 1)} ms, 2xx ${status['2xx']}, non-2xx ${status.non2xx}, errors ${errors}`,
    );
  }
  return phases;
}

/** One request to each target before measuring: 201, or the run stops. */
export async function smokeTest(
  targets: Record<Kind, { url: string; body: string }>,
  headers: Record<string, string>,
  answered: Record<Kind, { ok: number }>,
) {
  step('Smoke test');
  for (const kind of ['vault', 'bare'] as const) {
    const { url, body } = targets[kind];
    const answer = await requestJson<{ tokenId?: string; card?: { number: string } }>(url, {
      method: 'POST',
      headers,
      body: body.replaceAll('[<id>]', 'smoke'),
    });
    if (answer.status !== 201)
      fail(`${kind}: POST ${url} answered ${answer.status} ${JSON.stringify(answer.body)}`);
    answered[kind].ok++;
    note(
      `${kind}: 201${answer.body?.tokenId ? ` token ${answer.body.tokenId}, card ${answer.body.card?.number}` : ''}`,
    );
  }
}
