// The load generator: autocannon, in this process (its HTTP clients are cheap next to the services;
// the harness's own CPU is reported as "load-gen" so its share of the 2 cores is visible).
import autocannon from 'autocannon';
import { runPacedLoad } from './paced-load.js';

/** One load window's outcome, closed loop (autocannon) or paced. */
export interface LoadResult {
  url: string;
  connections: number;
  seconds: number;
  completed: number;
  sent: number;
  rps: number;
  offeredRps?: number;
  latencyMs: {
    p50: number | null;
    p90: number | null;
    p99: number | null;
    max: number | null;
    mean: number | null;
  };
  status: { '2xx': number; non2xx: number; byCode: Record<string, number> };
  errors: number;
  timeouts: number;
  resets: number;
}

/** A load to offer: where, what, and its shape (closed loop at `connections`, or paced at `rate`). */
export interface Load {
  url: string;
  connections: number;
  seconds: number;
  rate?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutS?: number;
  /** `[<id>]` in a header or the body becomes a new unique id for every request. */
  uniqueIds?: boolean;
}

/**
 * Runs one fixed-duration closed-loop load and answers a compact result.
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
}: Load): Promise<LoadResult> {
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
      (error: Error | null, result: autocannon.Result) => {
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

/** Runs `load` closed loop, or paced when it has a rate. */
export async function offer(load: Load): Promise<LoadResult> {
  return load.rate === undefined ? runLoad(load) : runPacedLoad({ ...load, rate: load.rate });
}
