import { createPublicKey, randomUUID } from 'node:crypto';
import type { RpcSubject } from '@byrd/contracts';
import { decodeJwt, type JWK } from 'jose';
import {
  ErrorKind,
  NatsContext,
  Refusal,
  Rpc,
  RpcIdentity,
  ServiceMetrics,
  type ApiError,
} from '@byrd/platform';
import { TEST_NATS_URL, TestEnvironment } from '@byrd/platform/testing';

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
        RPC_TRUSTED_CALLERS: env.rpcTrustedCallers(),
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

  /** A counter of the caller's `/metrics` (one registry per caller), for the series with these labels. */
  const metricsOf = new Map<Rpc, ServiceMetrics>();
  async function counted(caller: Rpc, name: string, labels: Record<string, string>): Promise<number> {
    if (!metricsOf.has(caller)) metricsOf.set(caller, new ServiceMetrics(null, null, caller));
    const metric = metricsOf.get(caller)!.registry.getSingleMetric(name);
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
    // Repeated while it waited: at 0, 100, 300, 700 and 1,500 ms (each wait doubles, and a try
    // needs 100 ms left of the 2 s), never more.
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(5);
  });

  it('repeats later for a subject that usually answers slowly: an overloaded service is not asked more', async () => {
    let answerAfterMs = 300;
    const served = new Map<string, number>(); // tries per call (its order id)
    rpcOf('orders').serve('rpc.orders.embedding', async ({ orderId }) => {
      served.set(orderId, (served.get(orderId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
      return { orderId } as never;
    });
    const caller = rpcOf('hosted-form-bff');
    // Unknown yet: repeated after the shortest wait.
    const first = randomUUID();
    await caller.call('rpc.orders.embedding', { orderId: first }, 3_000);
    expect(served.get(first)).toBeGreaterThanOrEqual(2);

    // Now known to take about 300 ms: a call answered after 600 ms is not repeated.
    answerAfterMs = 600;
    const second = randomUUID();
    await caller.call('rpc.orders.embedding', { orderId: second }, 3_000);
    expect(served.get(second)).toBe(1);
  });

  it('times only the answer that wins: a paused replica answering late does not slow the repeats down', async () => {
    // A replica alone in the group takes the first try, and answers it only after 800 ms.
    let answeredLate = false;
    const paused = env.nats.nc.subscribe(env.nats.subject('rpc.orders.get'), {
      queue: 'orders',
      callback: (_error, message) => {
        paused.unsubscribe();
        const { orderId } = message.json<{ orderId: string }>();
        setTimeout(() => {
          message.respond(JSON.stringify({ ok: true, data: { orderId } }));
          answeredLate = true;
        }, 800);
      },
    });
    await env.nats.nc.flush();
    let answerAfterMs = 0;
    const served = new Map<string, number>(); // tries per call (its order id), at the live replica
    const caller = rpcOf('hosted-form-bff');
    const call = caller.call('rpc.orders.get', { orderId: randomUUID(), checkoutKey: randomUUID() }, 3_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    rpcOf('orders').serve('rpc.orders.get', async ({ orderId }) => {
      served.set(orderId, (served.get(orderId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
      return { orderId } as never;
    });
    await call;
    await until(() => answeredLate);

    // The subject's usual answer time is the live replica's few ms, not the late 800 ms: a call the
    // live replica answers after 300 ms is repeated after the shortest wait.
    answerAfterMs = 300;
    const next = randomUUID();
    await caller.call('rpc.orders.get', { orderId: next, checkoutKey: randomUUID() }, 3_000);
    expect(served.get(next)).toBeGreaterThanOrEqual(2);
  });

  it('stops repeating a subject whose calls go unanswered (retry throttling): one try per call, not several', async () => {
    const served = new Map<string, number>(); // tries per call (its order id)
    // A replica that takes every request and answers none: the service answers nothing in time.
    const subscription = env.nats.nc.subscribe(env.nats.subject('rpc.orders.embedding'), {
      queue: 'orders',
      callback: (_error, message) => {
        const { orderId } = message.json<{ orderId: string }>();
        served.set(orderId, (served.get(orderId) ?? 0) + 1);
      },
    });
    await env.nats.nc.flush();
    const caller = rpcOf('hosted-form-bff');
    const tries: number[] = [];
    try {
      for (let call = 0; call < 7; call++) {
        const orderId = randomUUID();
        await expect(caller.call('rpc.orders.embedding', { orderId }, 300)).rejects.toMatchObject({
          kind: ErrorKind.Unavailable,
        });
        await until(() => served.has(orderId));
        tries.push(served.get(orderId)!);
      }
    } finally {
      subscription.unsubscribe();
    }
    // Two tries each (at 0 and 100 ms of 300) while the tokens last: five unanswered calls take
    // half of them; then one try per call.
    expect(tries).toEqual([2, 2, 2, 2, 2, 1, 1]);
  });

  it('fails a repeatable call at once when nobody serves the subject, without waiting for its timeout', async () => {
    const startedAt = performance.now();
    await expect(
      rpcOf('hosted-form-bff').call('rpc.orders.embedding', { orderId: randomUUID() }, 3_000),
    ).rejects.toMatchObject({ kind: ErrorKind.Unavailable });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it('answers the requests it is handling before a shutdown closes its connection', async () => {
    // A rolling deploy: the replica stops (SIGTERM) while handling a call that must not be asked
    // twice. The shutdown hooks run, then the broker connection closes (NatsLifecycle).
    const replica = await NatsContext.open(
      { url: TEST_NATS_URL, name: 'orders-stopping' },
      env.nats.subjectPrefix,
    );
    const stopping = new Rpc(
      replica,
      'orders',
      RpcIdentity.fromConfig('orders', {
        RPC_SIGNING_KEY: env.rpcKeyPair('orders').privateKey,
        RPC_TRUSTED_CALLERS: `hosted-form-bff:${env.rpcKeyPair('hosted-form-bff').publicKey}`,
      }),
    );
    let handling = false;
    stopping.serve('rpc.orders.cancel', async () => {
      handling = true;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { orderId: 'canceled' } as never;
    });
    await replica.nc.flush();
    const call = rpcOf('hosted-form-bff').call(
      'rpc.orders.cancel',
      { orderId: randomUUID(), checkoutKey: randomUUID() },
      2_000,
    );
    await until(() => handling);
    await stopping.beforeApplicationShutdown();
    await replica.close();
    await expect(call).resolves.toEqual({ orderId: 'canceled' });
  });

  it("fails a call the callee refuses for the caller's own identity as a 500, never the end caller's 403", async () => {
    rpcOf('orders').serve('rpc.orders.lockPayment', async () => ({}) as never);
    // payments signing with a key orders does not trust (a rotation half done): orders answers 403.
    const untrusted = new Rpc(
      env.nats,
      'payments',
      RpcIdentity.fromConfig('payments', { RPC_SIGNING_KEY: env.rpcKeyPair('webhook-service').privateKey }),
    );
    started.push(untrusted);
    const refusal = (await untrusted
      .call('rpc.orders.lockPayment', {
        orderId: randomUUID(),
        merchantId: 'merchant',
        transactionId: randomUUID(),
      })
      .then(
        () => null,
        (error: unknown) => error,
      )) as ApiError;
    // An idempotency-key keeps a 403 for a day; a 500 lets the merchant's retry run once it is fixed.
    expect(refusal).toMatchObject({
      kind: ErrorKind.Internal,
      message: 'rpc.orders.lockPayment could not be called',
    });
  });

  it("carries a refusal's Retry-After and whether it is final to the caller (its idempotency-key keeps only final ones)", async () => {
    const refusals = [
      Refusal.notAllowedYet('held for now', 7),
      Refusal.notAllowedUntilReleased('held'),
      Refusal.notAllowed('never'),
    ];
    rpcOf('orders').serve('rpc.orders.lockPayment', async ({ transactionId }) => {
      throw refusals[Number(transactionId)];
    });
    const caller = rpcOf('payments');
    const answers = await Promise.all(
      refusals.map((_, i) =>
        caller
          .call('rpc.orders.lockPayment', {
            orderId: randomUUID(),
            merchantId: 'merchant',
            transactionId: String(i),
          })
          .then(
            () => null,
            (error: unknown) => error as ApiError,
          ),
      ),
    );
    expect(
      answers.map((e) => e && { code: e.code, retryAfter: e.retryAfter, transient: e.transient }),
    ).toEqual([
      { code: 'BYRD205', retryAfter: 7, transient: true },
      { code: 'BYRD205', retryAfter: undefined, transient: true },
      { code: 'BYRD205', retryAfter: undefined, transient: false },
    ]);
  });

  it('never takes an answer another client of the broker sends before the serving service', async () => {
    const subject = 'rpc.orders.lockPayment';
    // orders answers after 200 ms; a plain subscriber of the subject (no queue group: NATS hands it
    // every request too) answers at once, in clear and sealed to the reply key the request names.
    rpcOf('orders').serve(subject, async ({ transactionId }) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { lockedBy: transactionId } as never;
    });
    const forger = RpcIdentity.fromConfig('orders', {});
    let forged = 0;
    const fake = env.nats.nc.subscribe(env.nats.subject(subject), {
      callback: (_error, message) => {
        forged++;
        const { jws } = message.json<{ jws: string }>();
        const { rk } = decodeJwt<{ rk: JWK }>(jws);
        const replyKey = createPublicKey({ key: { kty: rk.kty, crv: rk.crv, x: rk.x }, format: 'jwk' });
        const fakeReply = { ok: true, data: { lockedBy: 'forged' } } as const;
        if (forged % 2 === 1) {
          message.respond(JSON.stringify(fakeReply));
          return;
        }
        void forger
          .seal(fakeReply, { caller: 'payments', requestId: 'x', replyKey }, subject)
          .then((sealed) => message.respond(JSON.stringify(sealed)));
      },
    });
    await env.nats.nc.flush();
    try {
      const caller = rpcOf('payments');
      for (const transactionId of ['tx-in-clear', 'tx-sealed']) {
        const answer = await caller
          .call(subject, { orderId: randomUUID(), merchantId: 'merchant', transactionId }, 2_000)
          .then(
            (data) => data,
            (error: unknown) => error as ApiError,
          );
        // The genuine answer, or a failed call: never the forged lock.
        expect(answer).not.toMatchObject({ lockedBy: 'forged' });
        if (!('lockedBy' in answer)) {
          expect(answer).toMatchObject({
            kind: ErrorKind.Internal,
            message: `${subject} could not be called`,
          });
        } else {
          expect(answer).toEqual({ lockedBy: transactionId });
        }
      }
    } finally {
      fake.unsubscribe();
    }
    expect(forged).toBeGreaterThanOrEqual(2);
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

    // 503 with Retry-After, in words a merchant can act on; NATS's own only in the logs (the cause).
    const refusal = (await call.then(
      () => null,
      (error: unknown) => error,
    )) as ApiError;
    expect(refusal).toMatchObject({
      kind: ErrorKind.Unavailable,
      message: 'rpc.orders.cancel did not answer in time; retry the request',
      retryAfter: 1,
    });
    expect(String(refusal.cause)).toMatch(/rpc\.orders\.cancel: .*timeout/i);
    expect(served).toBe(0);
    const subject = 'rpc.orders.cancel';
    expect(await counted(caller, 'rpc_client_calls_total', { subject, result: 'unanswered' })).toBe(1);
    expect(await counted(caller, 'rpc_client_repeated_tries_total', { subject })).toBe(0);
  });
});

/** What a client of the broker subscribed to a card subject reads, through the real NATS. */
describe('Rpc requests that carry a card', () => {
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
    const trusted = ['payments', 'gateway-tokens', 'hosted-form-bff']
      .map((name) => `${name}:${env.rpcKeyPair(name).publicKey}`)
      .join(',');
    const rpc = new Rpc(
      env.nats,
      service,
      RpcIdentity.fromConfig(service, {
        RPC_SIGNING_KEY: env.rpcKeyPair(service).privateKey,
        RPC_TRUSTED_CALLERS: trusted,
      }),
    );
    started.push(rpc);
    return rpc;
  };

  it('reaches the serving service, and no other subscriber of the subject can read the card', async () => {
    const card = { number: '4242424242424242', expiration: '12/30', cvv: '737', holder: 'Ana Silva' };
    const served: unknown[] = [];
    rpcOf('payments').serve('rpc.payments.create', async (request) => {
      served.push(request);
      return {} as never;
    });
    const wire: string[] = [];
    const listener = env.nats.nc.subscribe(env.nats.subject('rpc.payments.create'), {
      callback: (_error, message) => {
        wire.push(message.string());
      },
    });
    await env.nats.nc.flush();
    try {
      await rpcOf('hosted-form-bff').call('rpc.payments.create', { orderId: randomUUID(), card } as never);
    } finally {
      listener.unsubscribe();
    }
    expect(served).toEqual([expect.objectContaining({ card })]);
    expect(wire).toHaveLength(1);
    for (const secret of [card.number, card.cvv, card.holder]) {
      expect(readableTextOf(wire[0])).not.toContain(secret);
    }
  });
});

/** A message as its reader sees it: the text, and every base64url run in it decoded. */
function readableTextOf(message: string): string {
  const runs = message.match(/[A-Za-z0-9_-]{16,}/g) ?? [];
  return [message, ...runs.map((run) => Buffer.from(run, 'base64url').toString('utf8'))].join('\n');
}
