import { randomUUID } from 'node:crypto';
import type { RpcSubject } from '@byrd/contracts';
import { ErrorKind, Rpc, RpcIdentity } from '@byrd/platform';
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
  afterAll(async () => {
    await Promise.all(started.map((rpc) => rpc.beforeApplicationShutdown()));
    await env?.cleanup();
  });

  const rpcOf = (service: string) => {
    const rpc = new Rpc(
      env.nats,
      service,
      RpcIdentity.fromConfig(service, { RPC_SIGNING_KEY: env.rpcKeyPair(service).privateKey }),
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

  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  it('asks a repeatable subject (an order read) again, and the live replica answers', async () => {
    const taken = await pausedReplica('rpc.orders.get');
    const request = { orderId: randomUUID(), checkoutKey: randomUUID() };
    const call = rpcOf('hosted-form-bff').call('rpc.orders.get', request, 3_000);
    await until(() => taken.length === 1);
    // The live replica joins only now: the first try can have gone nowhere else.
    rpcOf('orders').serve('rpc.orders.get', async ({ orderId }) => ({ orderId }) as never);

    await expect(call).resolves.toEqual({ orderId: request.orderId });
    expect(taken).toEqual([request]);
  });

  it('does not repeat a subject that must not run twice (a cancel): the call fails', async () => {
    const taken = await pausedReplica('rpc.orders.cancel');
    const call = rpcOf('hosted-form-bff').call(
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
  });
});
