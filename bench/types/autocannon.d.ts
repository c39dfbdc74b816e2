// The part of autocannon (which ships no types) the load generator uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections: number;
      duration: number;
      method: string;
      headers: Record<string, string>;
      body?: string;
      timeout: number;
      pipelining: number;
      idReplacement: boolean;
    }
    interface Histogram {
      p50: number;
      p90: number;
      p99: number;
      max: number;
      mean: number;
    }
    interface Result {
      duration: number;
      requests: { total: number; sent: number };
      latency: Histogram;
      '2xx': number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
      errors: number;
      timeouts: number;
      resets: number;
    }
    interface Instance {
      on(event: 'error', listener: (error: Error) => void): void;
    }
  }
  function autocannon(
    options: autocannon.Options,
    done: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;
  export default autocannon;
}
