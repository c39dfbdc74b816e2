// The webhooks benchmark's delivery phases, one after another: throughput (a burst as fast as
// JetStream acknowledges), paced (--rate for --duration, latency from each scheduled publish time),
// the delivery stage alone (rows due now inserted, fan-out bypassed) and the noisy neighbour
// (another merchant's failing endpoint with a backlog due, while the bench merchant gets --rate).
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { RunContext } from '../core/guarded-run.js';
import type { Probes } from '../core/phase-runner.js';
import { dbName, note, pollUntil } from '../core/util.js';
import { EVENT, envelopeData, type Publisher } from './events.js';
import { noisyState, type NoisyState } from './ledger.js';
import { startNoisyNeighbour, type NoisyNeighbour, type WebhooksStack } from './stack.js';
import { deliveryWindow, type DeliveryPhase, type WindowContext } from './window.js';

export interface PhaseSettings {
  events: number;
  rate: number;
  durationS: number;
  deliveryOnly: boolean;
  noisy: string | null;
  noisyRows: number;
  quietWaitS: number;
}

export type NoisyPhase = DeliveryPhase & {
  noisy: NoisyState & { answer: string; rows: number; requestsDuringWindow: number };
};

const INSERT_DUE = `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
    content, occurred_at, status, next_attempt_at, created_at)`;

/** Every window's probes: the service, the receivers, PostgreSQL, NATS, this harness. */
function probesOf(stack: WebhooksStack, pool: pg.Pool, commits: pg.Pool): Probes {
  const receiver = stack.receiverProcess?.pid;
  return {
    cpu: {
      'webhook-service': stack.service.pid,
      receiver: receiver ?? [],
      postgres: { comm: 'postgres' },
      'nats-server': { comm: 'nats-server' },
      harness: 'self',
      machine: 'machine',
    },
    rss: { 'webhook-service': stack.service.pid, ...(receiver ? { receiver } : {}) },
    db: { pool, database: dbName(stack.databaseUrl) },
    commits,
  };
}

export async function runDeliveryPhases(
  context: RunContext,
  stack: WebhooksStack,
  publisher: Publisher,
  pools: { pool: pg.Pool; commits: pg.Pool },
  s: PhaseSettings,
  toPublicContent: (type: string, data: unknown) => unknown,
): Promise<{ phases: (DeliveryPhase | NoisyPhase)[]; noisy: NoisyNeighbour | null }> {
  const { pool } = pools;
  const c: WindowContext = {
    receiver: stack.receiver,
    sentAt: publisher.sentAt,
    pool,
    settingsId: stack.settingsId,
    probes: probesOf(stack, pool, pools.commits),
    quietWaitS: s.quietWaitS,
    seen: { arrivals: 1 }, // the smoke test's
  };
  const phases: (DeliveryPhase | NoisyPhase)[] = [];
  const paced = s.rate * s.durationS;
  const burst = publisher.newEvents(s.events);
  phases.push(
    await deliveryWindow(
      c,
      {
        name: 'throughput',
        load: { events: s.events },
        keys: burst.keys,
        detail: 'published as fast as JetStream acknowledges them',
      },
      () => publisher.publishBurst(burst.keys, burst.events),
    ),
  );
  const steady = publisher.newEvents(Math.max(1, Math.round(paced)));
  const pacedPhase = await deliveryWindow(
    c,
    {
      name: `paced ${s.rate}/s`,
      load: { events: steady.keys.length, seconds: s.durationS, rate: s.rate },
      keys: steady.keys,
      detail: 'latency from each scheduled publish time',
    },
    () => publisher.publishPaced(steady.keys, steady.events, s.rate),
  );
  phases.push({ ...pacedPhase, result: { ...pacedPhase.result, offeredRate: s.rate } });
  if (s.deliveryOnly) phases.push(await deliveryOnlyPhase(stack, publisher, c, s.events, toPublicContent));
  if (!s.noisy) return { phases, noisy: null };
  const noisy = await noisyPhase(context, stack, publisher, c, { ...s, noisy: s.noisy }, toPublicContent);
  phases.push(noisy.phase);
  return { phases, noisy: noisy.neighbour };
}

/** `events` webhooks due now inserted in one statement: the delivery workers alone. */
function deliveryOnlyPhase(
  stack: WebhooksStack,
  publisher: Publisher,
  c: WindowContext,
  events: number,
  toPublicContent: (type: string, data: unknown) => unknown,
): Promise<DeliveryPhase> {
  const keys = Array.from({ length: events }, () => randomUUID());
  const content = JSON.stringify(toPublicContent(EVENT, envelopeData(keys[0])));
  const detail = 'webhooks due now inserted in one statement (no JetStream, no fan-out)';
  return deliveryWindow(c, { name: 'delivery stage only', load: { events }, keys, detail }, async () => {
    publisher.inserted(keys);
    // Nothing wakes the workers: they find the rows at their next poll (WEBHOOK_POLL_MS, 250 ms).
    await c.pool.query(
      `${INSERT_DUE}
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), $3, 'card', ARRAY[k],
         jsonb_set($4::jsonb, '{transactionId}', to_jsonb(k)), now(), 'pending', now(), now()
       FROM unnest($5::text[]) k`,
      [stack.merchant.merchantId, stack.settingsId, EVENT, content, keys],
    );
  });
}

/** --noisy-rows webhooks of the noisy neighbour due now; answers once the first reached its receiver. */
async function insertNoisyBacklog(
  pool: pg.Pool,
  noisy: NoisyNeighbour,
  rows: number,
  toPublicContent: (type: string, data: unknown) => unknown,
): Promise<void> {
  const content = JSON.stringify(toPublicContent(EVENT, envelopeData(randomUUID())));
  const { rowCount } = await pool.query(
    `${INSERT_DUE}
     SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), $3, 'card', '{}', $4::jsonb, now(), 'pending',
       now() - interval '1 second' + g * interval '1 microsecond', now()
     FROM generate_series(1, $5::int) g`,
    [noisy.merchantId, noisy.settingsId, EVENT, content, rows],
  );
  noisy.inserted = rowCount ?? 0;
  // A real backlog builds up over hours, with autovacuum analysing the table on the way; one
  // statement does not, and plans made for a tenth of the rows would be measured instead.
  await pool.query('ANALYZE webhooks');
  // The backlog is being worked on (the first attempts went out) before the merchant's load starts.
  await pollUntil(async () => (await noisy.receiver.count()).requests > 0, {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
}

/** The bench merchant's paced load beside a failing endpoint with --noisy-rows due (docs/webhook-fairness.md). */
async function noisyPhase(
  context: RunContext,
  stack: WebhooksStack,
  publisher: Publisher,
  c: WindowContext,
  s: PhaseSettings & { noisy: string },
  toPublicContent: (type: string, data: unknown) => unknown,
): Promise<{ phase: NoisyPhase; neighbour: NoisyNeighbour }> {
  const answer = s.noisy;
  const { keys, events } = publisher.newEvents(Math.max(1, Math.round(s.rate * s.durationS)));
  let neighbour: NoisyNeighbour | undefined;
  let requestsBefore = 0;
  const setup = async () => {
    neighbour = await startNoisyNeighbour(context, stack, answer);
    // Its CPU counts with the receivers' (not as other work on the machine).
    c.probes.cpu.receiver = [stack.receiverProcess?.pid, neighbour.pid].filter((pid) => pid !== undefined);
  };
  const warmUp = async () => {
    await insertNoisyBacklog(c.pool, neighbour!, s.noisyRows, toPublicContent);
    requestsBefore = (await neighbour!.receiver.count()).requests;
  };
  const name = `noisy neighbour (${answer})`;
  const detail = `${s.noisyRows} webhooks due now at a receiver that ${answer === 'hang' ? 'never answers' : 'answers 500'}, then ${keys.length} events at ${s.rate}/s for the bench merchant`;
  const load = { events: keys.length, seconds: s.durationS, rate: s.rate };
  const phase = await deliveryWindow(c, { name, load, keys, detail, setup, warmUp }, () =>
    publisher.publishPaced(keys, events, s.rate),
  );
  const noisy = neighbour!;
  const state = {
    answer,
    rows: noisy.inserted,
    requestsDuringWindow: (await noisy.receiver.count()).requests - requestsBefore,
    ...(await noisyState(c.pool, stack.service.url, noisy.settingsId)),
  };
  note(
    `noisy endpoint: ${state.requestsDuringWindow} requests during the window, ${state.attempts} attempts recorded in all, ` +
      `${state.pending} of ${state.rows} still pending (${state.inFlight} in flight), circuit ${state.circuit}`,
  );
  return {
    phase: { ...phase, result: { ...phase.result, offeredRate: s.rate }, noisy: state },
    neighbour: noisy,
  };
}
