import { randomUUID } from 'node:crypto';
import { ApiKeyRegistry, ApiKeyStore, NatsContext } from '@byrd/platform';
import { PrivateNatsServer } from '@byrd/platform/testing';

/**
 * The registry's cache of API keys when the broker restarts without the watch's consumer (a failover
 * to a node that never had it): a key revoked right after must stop working within a second, as it
 * does when nothing restarts, not once the library's consumer misses its heartbeats (a minute later).
 */
describe('API key registry across a broker restart', () => {
  let server: PrivateNatsServer;
  let service: NatsContext;
  let admin: NatsContext;
  let registry: ApiKeyRegistry;
  let keys: ApiKeyStore;

  beforeAll(async () => {
    server = await PrivateNatsServer.start();
    service = await NatsContext.open({ url: server.url, name: 'service' }, '');
    admin = await NatsContext.open({ url: server.url, name: 'admin' }, '');
    keys = new ApiKeyStore(await admin.kv('API_KEYS'));
    registry = new ApiKeyRegistry(await service.kv('API_KEYS'), service);
    await registry.onModuleInit();
  });
  afterAll(async () => {
    registry?.onApplicationShutdown();
    await Promise.all([service?.nc.close(), admin?.nc.close()]);
    await server?.remove();
  });

  const merchant = () => ({
    merchantId: randomUUID(),
    merchantName: 'Restart',
    mode: 'sandbox' as const,
    scopes: [],
  });

  /** Retries an admin call until the restarted broker (and its JetStream) takes it. */
  async function whenBrokerTakes<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Polls `condition` until it holds (10 s at most: the test then fails on what follows). */
  async function until(condition: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 10_000; !condition() && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async function secondsUntilRefused(apiKey: string, limitMs: number): Promise<number> {
    const start = Date.now();
    while (Date.now() - start < limitMs) {
      if ((await registry.resolve(apiKey).catch(() => 'unanswered')) === null) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return (Date.now() - start) / 1000;
  }

  it('keeps known keys while the broker is down, and refuses one revoked after it is back within a second', async () => {
    const kept = await keys.issue(merchant());
    const revoked = await keys.issue(merchant());
    await until(() => registry.knows(kept) && registry.knows(revoked));
    expect(await registry.resolve(revoked)).toMatchObject({ merchantName: 'Restart' });

    await server.stop();
    // Nothing can be revoked while the broker is down, so the keys known before still authenticate.
    expect(await registry.resolve(kept)).toMatchObject({ merchantName: 'Restart' });
    await server.restartWithoutConsumersOf('KV_API_KEYS');

    await whenBrokerTakes(() => keys.revoke(revoked));
    expect(await secondsUntilRefused(revoked, 10_000)).toBeLessThan(3);
    expect(await registry.resolve(kept)).toMatchObject({ merchantName: 'Restart' });
  });

  it('learns the keys issued after a restart, so they too authenticate through the next outage', async () => {
    await server.restartWithoutConsumersOf('KV_API_KEYS');
    const added = await whenBrokerTakes(() => keys.issue(merchant()));
    await until(() => registry.knows(added));

    await server.stop();
    // Only the watch can have told the registry of it: a lookup now has no broker to ask.
    expect(await registry.resolve(added)).toMatchObject({ merchantName: 'Restart' });
    await server.start();
  });
});
