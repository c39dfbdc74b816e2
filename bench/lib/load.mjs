// The load generator: autocannon, in this process (its HTTP clients are cheap next to the services;
// the harness's own CPU is reported as "load-gen" so its share of the 2 cores is visible).
import autocannon from 'autocannon';

/**
 * Runs one fixed-duration load and answers a compact result:
 * { url, connections, seconds, completed, sent, rps, latencyMs: { p50, p90, p99, max, mean },
 *   status: { '2xx', non2xx, byCode }, errors, timeouts, resets }.
 * Requests still in flight when the window closes are dropped by autocannon: `sent - completed`
 * (the server may still commit them, which the ledger checks allow for).
 */
export function runLoad({
  url,
  connections = 50,
  seconds = 10,
  method = 'POST',
  headers = {},
  body,
  timeoutS = 10,
  uniqueIds = false,
}) {
  return new Promise((resolveRun, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        method,
        headers,
        body,
        timeout: timeoutS,
        pipelining: 1,
        // `[<id>]` in a header or the body becomes a new unique id for every request.
        idReplacement: uniqueIds,
      },
      (error, result) => {
        if (error) return reject(error);
        const completed = result.requests.total;
        resolveRun({
          url,
          connections,
          seconds: result.duration,
          completed,
          sent: result.requests.sent,
          rps: completed / result.duration,
          latencyMs: {
            p50: result.latency.p50,
            p90: result.latency.p90,
            p99: result.latency.p99,
            max: result.latency.max,
            mean: result.latency.mean,
          },
          status: {
            '2xx': result['2xx'],
            non2xx: result.non2xx,
            byCode: Object.fromEntries(
              Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]),
            ),
          },
          errors: result.errors,
          timeouts: result.timeouts,
          resets: result.resets,
        });
      },
    );
    instance.on('error', reject);
  });
}
