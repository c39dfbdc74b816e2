// A paced (open-loop) load: requests are scheduled at a fixed rate, evenly spread, whatever the
// answers do, over at most `connections` keep-alive connections (undici Pool). Each latency is
// measured from the request's *scheduled* time, so a slow answer that holds up the next requests
// counts against them too (no coordinated omission, as wrk2 measures). This is the latency a
// merchant sees at a given throughput, which a saturated closed loop (autocannon) cannot show: there,
// latency is only queueing (mean = connections / req/s).
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { percentile } from './util.mjs';

/**
 * Offers `rate` requests a second for `seconds`; answers the same compact result as runLoad, with
 * `offeredRps`. Requests unanswered `timeoutS` after the window are counted as timeouts.
 */
/** Share of a paced phase's scheduled requests that may go unanswered (or non-2xx) and still count as sustained. */
export const PACED_SHORTFALL = 0.03;

/** Whether a paced phase kept up: (nearly) every scheduled request answered 2xx within the window. */
export const sustained = (result) => result.status['2xx'] >= result.sent * (1 - PACED_SHORTFALL);

export async function runPacedLoad({
  url,
  rate,
  seconds,
  connections = 50,
  method = 'POST',
  headers = {},
  body,
  timeoutS = 10,
}) {
  const target = new URL(url);
  const pool = new Pool(target.origin, {
    connections,
    pipelining: 1,
    headersTimeout: timeoutS * 1000,
    bodyTimeout: timeoutS * 1000,
  });
  const path = `${target.pathname}${target.search}`;
  const intervalMs = 1000 / rate;
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies = [];
  const byCode = {};
  let errors = 0;
  let timeouts = 0;
  let inFlight = 0;
  let drained;

  // `[<id>]` in a header value becomes a new unique id for every request (as with runLoad).
  const unique = Object.values(headers).some((value) => String(value).includes('[<id>]'));
  const headersFor = () =>
    unique
      ? Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [
            name,
            String(value).replace('[<id>]', randomUUID()),
          ]),
        )
      : headers;

  // ... and in the body too, as autocannon's idReplacement does (e.g. a new token per request).
  const payloadFor =
    body === undefined
      ? () => undefined
      : body.includes('[<id>]')
        ? () => body.replaceAll('[<id>]', randomUUID())
        : (
            (fixed) => () =>
              fixed
          )(Buffer.from(body));
  // dispatch with a bare handler, not pool.request(): no response stream per request, so the load
  // generator's own CPU (it shares the machine with what it measures) stays small.
  const fire = (scheduledAt) => {
    let statusCode = 0;
    inFlight++;
    pool.dispatch(
      { path, method, headers: headersFor(), body: payloadFor() },
      {
        onRequestStart() {},
        onResponseStart(_controller, code) {
          statusCode = code;
        },
        onResponseData() {},
        onResponseEnd() {
          inFlight--;
          latencies.push(performance.now() - scheduledAt);
          byCode[statusCode] = (byCode[statusCode] ?? 0) + 1;
          if (inFlight === 0) drained?.();
        },
        onResponseError(_controller, error) {
          inFlight--;
          if (error?.code === 'UND_ERR_HEADERS_TIMEOUT' || error?.code === 'UND_ERR_BODY_TIMEOUT') timeouts++;
          else errors++;
          if (inFlight === 0) drained?.();
        },
      },
    );
  };

  const start = performance.now();
  let issued = 0;
  await new Promise((resolveSchedule) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
      while (issued < due) fire(start + issued++ * intervalMs);
      if (issued >= total) return resolveSchedule();
      setTimeout(tick, Math.max(0, start + issued * intervalMs - performance.now()));
    };
    tick();
  });
  const scheduleEnd = performance.now();
  if (inFlight > 0) {
    await new Promise((resolveDrain) => {
      drained = resolveDrain;
      setTimeout(resolveDrain, timeoutS * 1000).unref();
    });
  }
  const unanswered = inFlight;
  await pool.destroy();

  latencies.sort((a, b) => a - b);
  const completed = latencies.length;
  const durationS = (scheduleEnd - start) / 1000;
  const ok = Object.entries(byCode).reduce((n, [code, count]) => (code.startsWith('2') ? n + count : n), 0);
  const round = (ms) => (ms === null ? null : Math.round(ms));
  return {
    url,
    connections,
    seconds: durationS,
    offeredRps: rate,
    completed,
    sent: issued,
    rps: completed / durationS,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? null),
      mean: round(completed ? latencies.reduce((a, b) => a + b, 0) / completed : null),
    },
    status: { '2xx': ok, non2xx: completed - ok, byCode },
    errors,
    timeouts: timeouts + unanswered,
    resets: 0,
  };
}
