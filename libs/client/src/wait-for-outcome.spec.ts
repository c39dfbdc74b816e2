import { describe, expect, it } from '@jest/globals';
import { ByrdClient } from './client.js';
import { ByrdTimeoutError } from './resources/gateway.js';

describe('waitForOutcome', () => {
  it('ends at its timeout even when a read hangs (its retries included)', async () => {
    let reads = 0;
    // The first read answers Processing; every later one hangs until its caller gives up.
    const hanging: typeof fetch = (_url, init) => {
      reads += 1;
      if (reads === 1)
        return Promise.resolve(
          new Response(JSON.stringify({ transactionId: 't-1', status: 'Processing' }), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
        );
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error), { once: true });
      });
    };
    const client = new ByrdClient({ apiKey: 'k', fetch: hanging });
    const started = Date.now();
    const waited = await client.transactions
      .waitForOutcome('t-1', { timeoutMs: 400, intervalMs: 50 })
      .catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(ByrdTimeoutError);
    expect((waited as ByrdTimeoutError).transaction.status).toBe('Processing');
    // Not the 4 attempts of 30 s each a hung read would otherwise take.
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
