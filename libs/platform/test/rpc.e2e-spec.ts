import { randomUUID } from 'node:crypto';
import type { RpcSubject } from '@byrd/contracts';
import { ErrorKind, Rpc, RpcIdentity, ServiceMetrics } from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';

/**
 * Rpc over the real NATS, when a replica of the served side is paused (a long GC pause, a frozen
 * VM): it stays in the queue group, takes its share of the requests and answers none of them.
 */
describe('Rpc with a paused replica', () => {
  let env: TestEnvironment;
  const started: Rpc[] = [];

  beforeAll(async () => {
    env = await TestEnvironment.create();
  });
  // Each test's replicas leave the queue groups with it.
  afterEach(async () => {
    await Promise.all(started.splice(0).map((rpc) => rpc.beforeApplicationShutdown()));
  });
  afterAll(async () => {
    await env?.cleanup();
  });

  const rpcOf = (service: string) => {
    const rpc = new Rpc(
      env.nats,
      service,
      RpcIdentity.fromConfig(service, {
        RPC_SIGNING_KEY: env.rpcKeyPair(service).privateKey,
        RPC_TRUSTED_CALLERS: `payments:${env.rpcKeyPair('payments').publicKey}`,
      }),
    );
    started.push(rpc);
    return rpc;
  };

  /**
   * A replica of orders that is alone in the queue group when the first request comes, takes it,
   * never answers, and leaves. Answers the requests it took.
   */
  async function pausedReplica(subject: RpcSubject): Promise<unknown[]> {
    const taken: unknown[] = [];
    const subscription = env.nats.nc.subscribe(env.nats.subject(subject), {
      queue: 'orders',
      callback: (_error, message) => {
        taken.push(message.json());
        subscription.unsubscribe();
      },
    });
    await env.nats.nc.flush();
    return taken;
  }

  /** A counter of the caller's `/metrics`, for the series with these labels. */
  async function counted(caller: Rpc, name: string, labels: Record<string, string>): Promise<number> {
    const metric = new ServiceMetrics(null, null, caller).registry.getSingleMetric(name);
    const { values } = await metric!.get();
    const series = values.find((v) =>
      Object.entries(labels).every(([key, value]) => v.labels[key] === value),
    );
    return series?.value ?? 0;
  }

  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  it('asks a repeatable subject (an order read) again while a paused replica holds the first try', async () => {
    const taken = await pausedReplica('rpc.orders.get');
    const request = { orderId: randomUUID(), checkoutKey: randomUUID() };
    const startedAt = performance.now();
    const caller = rpcOf('hosted-form-bff');
    const call = caller.call('rpc.orders.get', request, 3_000);
    await until(() => taken.length === 1);
    // The live replica joins only now: the first try can have gone nowhere else.
    rpcOf('orders').serve('rpc.orders.get', async ({ orderId }) => ({ orderId }) as never);

    await expect(call).resolves.toEqual({ orderId: request.orderId });
    expect(taken).toEqual([request]);
    // The next try went out after a short wait, not after a share of the call's timeout.
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    // What an operator sees: the call answered, after tries sent again.
    const subject = 'rpc.orders.get';
    expect(await counted(caller, 'rpc_client_calls_total', { subject, result: 'answered' })).toBe(1);
    expect(await counted(caller, 'rpc_client_repeated_tries_total', { subject })).toBeGreaterThanOrEqual(1);
  });

  it('keeps every try open: a replica slower than the first wait still answers the call', async () => {
    let served = 0;
    // Signed requests: each try is signed anew, or the served side would refuse the repeats as replays.
    rpcOf('orders').serve('rpc.orders.lockPayment', async () => {
      served++;
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      return { locked: true } as never;
    });
    const request = { orderId: randomUUID(), transactionId: randomUUID() } as never;

    await expect(rpcOf('payments').call('rpc.orders.lockPayment', request, 2_000)).resolves.toEqual({
      locked: true,
    });
    // Repeated while it waited (the waits double), never more than the limit.
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(6);
  });

  it('repeats later for a subject that usually answers slowly: an overloaded service is not asked more', async () => {
    let answerAfterMs = 300;
    let served = 0;
    rpcOf('orders').serve('rpc.orders.embedding', async ({ orderId }) => {
      served++;
      await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
      return { orderId } as never;
    });
    const caller = rpcOf('hosted-form-bff');
    // Unknown yet: repeated after the shortest wait.
    await caller.call('rpc.orders.embedding', { orderId: randomUUID() }, 3_000);
    expect(served).toBeGreaterThanOrEqual(2);

    // Now known to take about 300 ms: a call answered after 600 ms is not repeated.
    served = 0;
    answerAfterMs = 600;
    await caller.call('rpc.orders.embedding', { orderId: randomUUID() }, 3_000);
    expect(served).toBe(1);
  });

  it('fails a repeatable call at once when nobody serves the subject, without waiting for its timeout', async () => {
    const startedAt = performance.now();
    await expect(
      rpcOf('hosted-form-bff').call('rpc.orders.embedding', { orderId: randomUUID() }, 3_000),
    ).rejects.toMatchObject({ kind: ErrorKind.Unavailable });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it('does not repeat a subject that must not run twice (a cancel): the call fails', async () => {
    const taken = await pausedReplica('rpc.orders.cancel');
    const caller = rpcOf('hosted-form-bff');
    const call = caller.call(
      'rpc.orders.cancel',
      { orderId: randomUUID(), checkoutKey: randomUUID() },
      1_000,
    );
    await until(() => taken.length === 1);
    let served = 0;
    rpcOf('orders').serve('rpc.orders.cancel', async () => {
      served++;
      return {} as never;
    });

    await expect(call).rejects.toMatchObject({ kind: ErrorKind.Unavailable });
    expect(served).toBe(0);
    const subject = 'rpc.orders.cancel';
    expect(await counted(caller, 'rpc_client_calls_total', { subject, result: 'unanswered' })).toBe(1);
    expect(await counted(caller, 'rpc_client_repeated_tries_total', { subject })).toBe(0);
  });
});
