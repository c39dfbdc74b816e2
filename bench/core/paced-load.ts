// A paced (open-loop) load: requests are scheduled at a fixed rate, evenly spread, whatever the
// answers do, over at most `connections` keep-alive connections (undici Pool). Each latency is
// measured from the request's *scheduled* time, so a slow answer that holds up the next requests
// counts against them too (no coordinated omission, as wrk2 measures). This is the latency a
// merchant sees at a given throughput, which a saturated closed loop (autocannon) cannot show: there,
// latency is only queueing (mean = connections / req/s).
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import type { LoadResult } from './load.js';
import { percentile } from './util.js';

/** Share of a paced phase's scheduled requests that may go unanswered (or non-2xx) and still count as sustained. */
export const PACED_SHORTFALL = 0.03;

/** Whether a paced phase kept up: (nearly) every scheduled request answered 2xx within the window. */
export const sustained = (result: LoadResult) => result.status['2xx'] >= result.sent * (1 - PACED_SHORTFALL);

export interface PacedLoad {
  url: string;
  rate: number;
  seconds: number;
  connections?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutS?: number;
}

/**
 * `[<id>]` in a header value or the body becomes a new unique id for every request (as autocannon's
 * idReplacement does, e.g. a new token per request); otherwise the same headers and body every time.
 */
function requestFactory(headers: Record<string, string>, body: string | undefined) {
  const unique = Object.values(headers).some((value) => value.includes('[<id>]'));
  const headersFor = () =>
    unique
      ? Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [name, value.replace('[<id>]', randomUUID())]),
        )
      : headers;
  const fixed = body === undefined ? undefined : Buffer.from(body);
  const payloadFor = body?.includes('[<id>]') ? () => body.replaceAll('[<id>]', randomUUID()) : () => fixed;
  return () => ({ headers: headersFor(), body: payloadFor() });
}

/** Answers of one paced load: latencies from each request's scheduled time, status codes, failures. */
class Tally {
  readonly latencies: number[] = [];
  readonly byCode: Record<string, number> = {};
  errors = 0;
  timeouts = 0;
  inFlight = 0;
  drained: (() => void) | undefined;

  answered(scheduledAt: number, statusCode: number): void {
    this.inFlight--;
    this.latencies.push(performance.now() - scheduledAt);
    this.byCode[statusCode] = (this.byCode[statusCode] ?? 0) + 1;
    if (this.inFlight === 0) this.drained?.();
  }

  failed(error: Error & { code?: string }): void {
    this.inFlight--;
    if (error?.code === 'UND_ERR_HEADERS_TIMEOUT' || error?.code === 'UND_ERR_BODY_TIMEOUT') this.timeouts++;
    else this.errors++;
    if (this.inFlight === 0) this.drained?.();
  }
}

/**
 * Offers `rate` requests a second for `seconds`; answers the same compact result as runLoad, with
 * `offeredRps`. Requests unanswered `timeoutS` after the window are counted as timeouts.
 */
export async function runPacedLoad(load: PacedLoad): Promise<LoadResult> {
  const { url, rate, seconds, connections = 50, method = 'POST', headers = {}, body, timeoutS = 10 } = load;
  const target = new URL(url);
  const pool = new Pool(target.origin, {
    connections,
    pipelining: 1,
    headersTimeout: timeoutS * 1000,
    bodyTimeout: timeoutS * 1000,
  });
  const path = `${target.pathname}${target.search}`;
  const next = requestFactory(headers, body);
  const tally = new Tally();
  // dispatch with a bare handler, not pool.request(): no response stream per request, so the load
  // generator's own CPU (it shares the machine with what it measures) stays small.
  const fire = (scheduledAt: number) => {
    let statusCode = 0;
    tally.inFlight++;
    pool.dispatch(
      { path, method, ...next() },
      {
        onRequestStart() {},
        onResponseStart(_controller: unknown, code: number) {
          statusCode = code;
        },
        onResponseData() {},
        onResponseEnd: () => tally.answered(scheduledAt, statusCode),
        onResponseError: (_controller: unknown, error: Error & { code?: string }) => tally.failed(error),
      },
    );
  };
  const total = Math.max(1, Math.round(rate * seconds));
  const start = performance.now();
  await schedule(start, 1000 / rate, total, fire);
  const scheduleEnd = performance.now();
  if (tally.inFlight > 0) {
    await new Promise<void>((resolveDrain) => {
      tally.drained = resolveDrain;
      setTimeout(resolveDrain, timeoutS * 1000).unref();
    });
  }
  const unanswered = tally.inFlight;
  await pool.destroy();
  return resultOf(tally, {
    url,
    connections,
    rate,
    sent: total,
    seconds: (scheduleEnd - start) / 1000,
    unanswered,
  });
}

/** Calls `fire(scheduledAt)` for request i at start + i x intervalMs, catching up when late. */
function schedule(start: number, intervalMs: number, total: number, fire: (scheduledAt: number) => void) {
  let issued = 0;
  return new Promise<void>((resolveSchedule) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
      while (issued < due) fire(start + issued++ * intervalMs);
      if (issued >= total) return resolveSchedule();
      setTimeout(tick, Math.max(0, start + issued * intervalMs - performance.now()));
    };
    tick();
  });
}

function resultOf(
  tally: Tally,
  run: { url: string; connections: number; rate: number; sent: number; seconds: number; unanswered: number },
): LoadResult {
  const latencies = tally.latencies.sort((a, b) => a - b);
  const completed = latencies.length;
  const ok = Object.entries(tally.byCode).reduce(
    (n, [code, count]) => (code.startsWith('2') ? n + count : n),
    0,
  );
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms));
  return {
    url: run.url,
    connections: run.connections,
    seconds: run.seconds,
    offeredRps: run.rate,
    completed,
    sent: run.sent,
    rps: completed / run.seconds,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? null),
      mean: round(completed ? latencies.reduce((a, b) => a + b, 0) / completed : null),
    },
    status: { '2xx': ok, non2xx: completed - ok, byCode: tally.byCode },
    errors: tally.errors,
    timeouts: tally.timeouts + run.unanswered,
    resets: 0,
  };
}
