// One measured window of the webhooks benchmark: the events of `keys` are published (or inserted),
// and the window runs until the receiver has every one of them (or nothing arrived for
// STALL_TIMEOUT_MS); then latencies from each key's time to its first arrival, and how fast the
// fan-out created the bench merchant's webhook rows (sampled every 250 ms).
import type pg from 'pg';
import { runPhase, type LoadShape, type Measured, type Probes } from '../core/phase-runner.js';
import { note, paint, round, sampleEvery, sleep, summarise, type Summary } from '../core/util.js';
import { nowEpoch } from './events.js';
import type { Arrival, Receiver } from './receiver.js';

const STALL_TIMEOUT_MS = 30_000;

export interface FanOut {
  maxUndelivered: number;
  allCreatedAfterMs: number | null;
  samples: [number, number, number][];
  createdPerSecond: number | null;
}

export interface Delivery {
  events: number;
  delivered: number;
  complete: boolean;
  duplicates: number;
  publishSeconds: number | null;
  publishedPerSecond: number | null;
  seconds: number | null;
  deliveredPerSecond: number | null;
  latencyMs: Summary;
  fanOut: FanOut;
  publishLateMaxMs?: number | null;
  offeredRate?: number;
}

export type DeliveryPhase = Measured<Delivery>;

/** What every window of a run shares: the receiver, the times of the keys, the probes. */
export interface WindowContext {
  receiver: Receiver;
  sentAt: Map<string, number>;
  pool: pg.Pool;
  settingsId: string;
  probes: Probes;
  quietWaitS: number;
  /** Distinct webhook ids the receiver has seen before this window (updated by it). */
  seen: { arrivals: number };
}

/** Waits until the receiver saw `expected` distinct webhooks (true), or nothing arrived for STALL_TIMEOUT_MS. */
async function waitForArrivals(receiver: Receiver, expected: number): Promise<boolean> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const { distinct } = await receiver.count();
    if (distinct >= expected) return true;
    if (distinct !== last) {
      last = distinct;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > STALL_TIMEOUT_MS) return false;
    await sleep(20);
  }
}

/** Each key's first arrival, the latency from its time, and the requests that came again. */
function arrivalsOf(keys: string[], arrivals: Arrival[], sentAt: Map<string, number>, from: number) {
  const wanted = new Set(keys);
  const firstArrival = new Map<string, number>();
  let duplicates = 0;
  for (const [key, , at] of arrivals) {
    if (key === null || !wanted.has(key)) continue;
    if (firstArrival.has(key)) duplicates++;
    else firstArrival.set(key, at);
  }
  const latencies: number[] = [];
  let lastArrival = from;
  for (const [key, at] of firstArrival) {
    latencies.push(at - (sentAt.get(key) ?? at));
    if (at > lastArrival) lastArrival = at;
  }
  return { delivered: firstArrival.size, duplicates, latencies, lastArrival };
}

export async function deliveryWindow(
  c: WindowContext,
  phase: {
    name: string;
    load: LoadShape;
    detail?: string;
    keys: string[];
    setup?: () => Promise<void>;
    warmUp?: () => Promise<void>;
  },
  publish: () => Promise<{ publishLateMaxMs?: number | null } | void>,
): Promise<DeliveryPhase> {
  const { keys } = phase;
  let progress: ReturnType<typeof sampleProgress>;
  const times = { firstPublish: 0, published: 0 };
  let extra: { publishLateMaxMs?: number | null } | void;
  const measure = async () => {
    const expected = c.seen.arrivals + keys.length;
    progress = sampleProgress(c.pool, c.settingsId);
    times.firstPublish = nowEpoch();
    extra = await publish();
    times.published = nowEpoch();
    return waitForArrivals(c.receiver, expected);
  };
  const after = async (complete: boolean): Promise<Delivery> => {
    const fanOut = await progress.stop();
    const arrivals = await c.receiver.arrivals();
    c.seen.arrivals = new Set(arrivals.map((a) => a[1])).size;
    const { delivered, duplicates, latencies, lastArrival } = arrivalsOf(
      keys,
      arrivals,
      c.sentAt,
      times.firstPublish,
    );
    const seconds = (lastArrival - times.firstPublish) / 1000;
    const publishSeconds = (times.published - times.firstPublish) / 1000;
    const created = fanOut.allCreatedAfterMs ? round((keys.length * 1000) / fanOut.allCreatedAfterMs) : null;
    return {
      events: keys.length,
      delivered,
      complete,
      duplicates,
      publishSeconds: round(publishSeconds, 3),
      publishedPerSecond: round(keys.length / publishSeconds),
      seconds: round(seconds, 3),
      deliveredPerSecond: round(delivered / seconds),
      latencyMs: summarise(latencies),
      fanOut: { ...fanOut, createdPerSecond: created },
      ...(extra ?? {}),
    };
  };
  const measured = await runPhase({ ...phase, measure, after }, c.probes, c.quietWaitS);
  printPhaseLine(measured);
  return measured;
}

function printPhaseLine({ name, result: r }: DeliveryPhase): void {
  note(
    `${name}: ${r.delivered}/${r.events} delivered${r.complete ? '' : paint('1;31', ' (INCOMPLETE)')} in ${r.seconds} s = ${r.deliveredPerSecond}/s` +
      ` (published at ${r.publishedPerSecond}/s), latency p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, max ${r.latencyMs.max} ms` +
      (r.duplicates ? `, ${r.duplicates} duplicates` : ''),
  );
}

/** The bench merchant's webhook rows created and delivered, sampled every 250 ms during a window. */
function sampleProgress(pool: pg.Pool, settingsId: string) {
  const start = Date.now();
  const samples: { ms: number; created: number; succeeded: number }[] = [];
  let base: { created: number; succeeded: number } | null = null;
  const sampling = sampleEvery(250, async () => {
    const { rows } = await pool.query<{ created: number; succeeded: number }>(
      `SELECT count(*)::int AS created, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded
       FROM webhooks WHERE settings_id = $1`,
      [settingsId],
    );
    base ??= rows[0];
    samples.push({ ms: Date.now() - start, ...rows[0] });
  });
  return {
    async stop() {
      await sampling.stop();
      const final = samples.at(-1);
      const allCreated = samples.find((s) => final && s.created === final.created);
      const from = base ?? { created: 0, succeeded: 0 };
      return {
        maxUndelivered: Math.max(0, ...samples.map((s) => s.created - s.succeeded)),
        allCreatedAfterMs: allCreated && final && final.created > from.created ? allCreated.ms : null,
        samples: samples.map((s): [number, number, number] => [
          s.ms,
          s.created - from.created,
          s.succeeded - from.succeeded,
        ]),
      };
    },
  };
}
