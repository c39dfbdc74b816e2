import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorKind, NatsContext, RateLimiter, type RateLimitConfig } from '@byrd/platform';
import { PrivateNatsCluster } from '@byrd/platform/testing';
import { runCli } from '../src/cli/main.js';

/**
 * The rate-limit counts' bucket on a NATS cluster of three, as production runs it (streamReplicas 3):
 * every hosted-form call and `?checkoutKey=` payment counts in it, so it must keep its copies like
 * the stream and the other buckets, or the one server holding it takes checkout down (503) when it
 * restarts.
 */
describe('Rate-limit bucket on a NATS cluster', () => {
  let cluster: PrivateNatsCluster;
  let nats: NatsContext;

  beforeAll(async () => {
    cluster = await PrivateNatsCluster.start();
    nats = await NatsContext.open({ url: cluster.url, name: 'rate-limit-bucket' }, '');
  }, 40_000);
  afterAll(async () => {
    await nats?.nc.close();
    await cluster?.remove();
  });

  const config = (bucket: string): RateLimitConfig => ({
    RATE_LIMIT_BUCKET: bucket,
    RATE_LIMIT_WINDOW_MS: 60_000,
    RATE_LIMIT_PAYMENTS_MAX: 1_000,
    RATE_LIMIT_ORDER_PAYMENTS_MAX: 1_000,
    EVENTS_STREAM_REPLICAS: 3,
  });
  const shopper = { ip: '203.0.113.7' } as FastifyRequest;

  async function started(bucket: string): Promise<RateLimiter> {
    const limiter = new RateLimiter(nats, config(bucket));
    await limiter.onApplicationBootstrap();
    return limiter;
  }

  it('keeps the configured copies: payments are counted again soon after the server leading it stops', async () => {
    const limiter = await started('RATE_LIMITS_STOP');
    const info = await nats.jsm.streams.info('KV_RATE_LIMITS_STOP');
    expect(info.config.num_replicas).toBe(3);
    await limiter.check(shopper, ['payments']);

    const leader = cluster.member(info.cluster!.leader!);
    await leader.stop();
    try {
      // The other two elect a leader of their copies within seconds; one copy would be gone with it.
      const refusals: unknown[] = [];
      const counted = await until(
        () =>
          limiter.check(shopper, ['payments']).then(
            () => true,
            (error: unknown) => (refusals.push(error), false),
          ),
        20_000,
      );
      expect(counted).toBe(true);
      // Meanwhile a count that failed answered 503 "retry later", never a 429.
      for (const error of refusals) expect((error as ApiError).kind).toBe(ErrorKind.Unavailable);
    } finally {
      await leader.start();
      await cluster.ready();
    }
  }, 40_000);

  it('brings a bucket made with one copy (by an earlier version) to the configured copies at boot', async () => {
    await new Kvm(nats.nc).create('RATE_LIMITS_OLD', { history: 1, ttl: 120_000 });
    expect((await nats.jsm.streams.info('KV_RATE_LIMITS_OLD')).config.num_replicas).toBe(1);
    await started('RATE_LIMITS_OLD');
    expect((await nats.jsm.streams.info('KV_RATE_LIMITS_OLD')).config.num_replicas).toBe(3);
  });

  it("is provisioned by `cli nats provision` with the stream's copies and a TTL of two windows", async () => {
    const lines: string[] = [];
    const out = { log: (line: string) => lines.push(line), error: (line: string) => lines.push(line) };
    const env = {
      NATS_URL: cluster.url,
      EVENTS_STREAM: 'EVENTS_RATE_LIMIT_TEST',
      EVENTS_STREAM_REPLICAS: '3',
      API_KEYS_BUCKET: 'API_KEYS_RATE_LIMIT_TEST',
      MERCHANTS_BUCKET: 'MERCHANTS_RATE_LIMIT_TEST',
      RATE_LIMIT_BUCKET: 'RATE_LIMITS_PROVISIONED',
    };
    expect(await runCli(['nats', 'provision'], env, out)).toBe(0);
    const { config: bucket } = await nats.jsm.streams.info('KV_RATE_LIMITS_PROVISIONED');
    expect(bucket.num_replicas).toBe(3);
    expect(bucket.max_age).toBe(120_000 * 1_000_000);
    expect(lines.join('\n')).toContain('RATE_LIMITS_PROVISIONED');

    // An operator's CLI run without EVENTS_STREAM_REPLICAS (a laptop: the default, 1) leaves them all
    // in three copies: any command, provisioning included.
    const { EVENTS_STREAM_REPLICAS: _three, ...laptop } = env;
    expect(await runCli(['keys', 'verify', randomUUID()], laptop, out)).toBe(1);
    expect(await runCli(['nats', 'provision'], laptop, out)).toBe(0);
    for (const stream of [
      'EVENTS_RATE_LIMIT_TEST',
      'KV_API_KEYS_RATE_LIMIT_TEST',
      'KV_MERCHANTS_RATE_LIMIT_TEST',
      'KV_RATE_LIMITS_PROVISIONED',
    ]) {
      expect({ stream, copies: (await nats.jsm.streams.info(stream)).config.num_replicas }).toEqual({
        stream,
        copies: 3,
      });
    }
  });
});

/** Polls `condition` until it is true or `ms` pass; a throw counts as not yet. */
async function until(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await condition().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
