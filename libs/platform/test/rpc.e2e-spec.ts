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
      RpcIdentity.fromConfig('payments', {
        RPC_SIGNING_KEY: env.rpcKeyPair('webhook-service').privateKey,
        RPC_TRUSTED_CALLERS: env.rpcTrustedCallers(),
      }),
    );
    started.push(untrusted);
    const startedAt = performance.now();
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
    // Taken at once: orders signed its refusal for that very request.
    expect(performance.now() - startedAt).toBeLessThan(1_000);
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

  it("takes the serving service's answer when another client of the broker answers first, round after round", async () => {
    // A plain subscriber of a subject (no queue group: NATS hands it every request too) answers at
    // once, in every way it can without the serving service's key; the service answers after 30 ms.
    const forgeries = [
      'ok in clear',
      'sealed, unsigned',
      'sealed, signed by another key',
      'final refusal in clear',
      'refusal signed by another key',
      'not JSON',
    ];
    const forgers = [RpcIdentity.fromConfig('orders', {}), RpcIdentity.fromConfig('payments', {})];
    const strangers = ['orders', 'payments'].map((name) =>
      RpcIdentity.fromConfig(name, { RPC_SIGNING_KEY: env.rpcKeyPair('webhook-service').privateKey }),
    );
    const forged = new Map<string, number>();
    const forge = (subject: RpcSubject, caller: string, server: number) =>
      env.nats.nc.subscribe(env.nats.subject(subject), {
        callback: (_error, message) => {
          const count = forged.get(subject) ?? 0;
          forged.set(subject, count + 1);
          const { jws } = message.json<{ jws: string }>();
          const { rk, jti } = decodeJwt<{ rk: JWK }>(jws);
          const replyKey = createPublicKey({ key: { kty: rk.kty, crv: rk.crv, x: rk.x }, format: 'jwk' });
          const request = { caller, requestId: jti!, replyKey };
          const fakeOk = { ok: true, data: { lockedBy: 'forged', verificationId: 'forged' } } as const;
          const fakeRefusal = { ok: false, error: { code: 'BYRD205', message: 'forged' } } as const;
          const reply = async (): Promise<string> => {
            switch (forgeries[count % forgeries.length]) {
              case 'ok in clear':
                return JSON.stringify(fakeOk);
              case 'sealed, unsigned':
                return JSON.stringify(await forgers[server].seal(fakeOk, request, subject));
              case 'sealed, signed by another key':
                return JSON.stringify(await strangers[server].seal(fakeOk, request, subject));
              case 'final refusal in clear':
                return JSON.stringify(fakeRefusal);
              case 'refusal signed by another key':
                return JSON.stringify(await strangers[server].seal(fakeRefusal, request, subject)).replace(
                  /^\{/,
                  `{"ok":false,"error":${JSON.stringify(fakeRefusal.error)},`,
                );
              default:
                return 'not JSON';
            }
          };
          void reply().then((text) => message.respond(text));
        },
      });
    const answerLate = () => new Promise((resolve) => setTimeout(resolve, 30));
    // A repeatable subject (each try asked again while unanswered) and one asked once.
    rpcOf('orders').serve('rpc.orders.lockPayment', async ({ transactionId }) => {
      await answerLate();
      return { lockedBy: transactionId } as never;
    });
    rpcOf('payments').serve('rpc.payments.verifyCard', async ({ tokenId }) => {
      await answerLate();
      return { verificationId: tokenId } as never;
    });
    const fakes = [
      forge('rpc.orders.lockPayment', 'payments', 0),
      forge('rpc.payments.verifyCard', 'gateway-tokens', 1),
    ];
    await env.nats.nc.flush();
    try {
      const [payments, tokens] = [rpcOf('payments'), rpcOf('gateway-tokens')];
      for (let round = 0; round < 4; round++) {
        const ids = forgeries.map(() => randomUUID());
        const answers = await Promise.all(
          ids.flatMap((id) => [
            payments
              .call(
                'rpc.orders.lockPayment',
                { orderId: id, merchantId: 'merchant', transactionId: id },
                3_000,
              )
              .catch((error: unknown) => error),
            tokens
              .call('rpc.payments.verifyCard', { tokenId: id } as never, 3_000)
              .catch((error: unknown) => error),
          ]),
        );
        expect(answers).toEqual(ids.flatMap((id) => [{ lockedBy: id }, { verificationId: id }]));
      }
    } finally {
      fakes.forEach((fake) => fake.unsubscribe());
    }
    expect(forged.get('rpc.payments.verifyCard')).toBeGreaterThanOrEqual(4 * forgeries.length);
  });

  it("takes the serving service's answer on subjects whose requests are not signed, when another client answers first", async () => {
    // An order summary payments would charge, a cancel the shopper is shown: forged at once, in
    // clear, unsigned or signed by a key that is not orders'; orders answers after 30 ms.
    const stranger = RpcIdentity.fromConfig('orders', {
      RPC_SIGNING_KEY: env.rpcKeyPair('webhook-service').privateKey,
    });
    const forgeries = ['ok in clear', 'ok signed by another key', 'final refusal in clear', 'not JSON'];
    let forged = 0;
    const forge = (subject: RpcSubject) =>
      env.nats.nc.subscribe(env.nats.subject(subject), {
        callback: (_error, message) => {
          const kind = forgeries[forged++ % forgeries.length];
          const fakeOk = { ok: true, data: { orderId: 'forged', amount: '0.01' } } as const;
          const request = {
            caller: 'hosted-form-bff',
            requestId: message.headers?.get('Byrd-Rpc-Request-Id') ?? '',
            data: message.data,
          };
          const reply = async (): Promise<string> => {
            if (kind === 'ok in clear') return JSON.stringify(fakeOk);
            if (kind === 'ok signed by another key') {
              return JSON.stringify(await stranger.signInClear(fakeOk, request, subject));
            }
            if (kind === 'final refusal in clear') {
              return JSON.stringify({ ok: false, error: { code: 'BYRD205', message: 'forged' } });
            }
            return 'not JSON';
          };
          void reply().then((text) => message.respond(text));
        },
      });
    const orders = rpcOf('orders');
    for (const subject of ['rpc.orders.get', 'rpc.orders.cancel'] as const) {
      orders.serve(subject, async ({ orderId }) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return { orderId, amount: '10.00' } as never;
      });
    }
    const fakes = [forge('rpc.orders.get'), forge('rpc.orders.cancel')];
    await env.nats.nc.flush();
    try {
      const bff = rpcOf('hosted-form-bff');
      for (let round = 0; round < 4; round++) {
        const ids = forgeries.map(() => randomUUID());
        const answers = await Promise.all(
          ids.flatMap((orderId) =>
            (['rpc.orders.get', 'rpc.orders.cancel'] as const).map((subject) =>
              bff
                .call(subject, { orderId, checkoutKey: randomUUID() }, 3_000)
                .catch((error: unknown) => error),
            ),
          ),
        );
        expect(answers).toEqual(ids.flatMap((orderId) => [0, 1].map(() => ({ orderId, amount: '10.00' }))));
      }
    } finally {
      fakes.forEach((fake) => fake.unsubscribe());
    }
    expect(forged).toBeGreaterThanOrEqual(2 * 4 * forgeries.length);
  });

  it('takes an unsigned refusal in clear (a server of the release before signed refusals) when nothing signed comes', async () => {
    const subject = 'rpc.orders.unlockPayment';
    const older = env.nats.nc.subscribe(env.nats.subject(subject), {
      queue: 'orders',
      callback: (_error, message) => {
        message.respond(JSON.stringify({ ok: false, error: { code: 'BYRD403', message: 'not trusted' } }));
      },
    });
    await env.nats.nc.flush();
    try {
      const startedAt = performance.now();
      const refusal = (await rpcOf('payments')
        .call(subject, { orderId: randomUUID(), merchantId: 'merchant', transactionId: randomUUID() }, 500)
        .catch((error: unknown) => error)) as ApiError;
      expect({ kind: refusal.kind, cause: String(refusal.cause) }).toEqual({
        kind: ErrorKind.Internal,
        cause: `Error: ${subject} refused this service: not trusted`,
      });
      // Kept until the try's timeout, in case the service's signed answer was still to come.
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(450);
    } finally {
      older.unsubscribe();
    }
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
    // The CVV with its key: three digits alone turn up by chance in the ~1,100 characters of base64
    // ciphertext (about one run in 250 failed on "737"); the number and the holder stand alone.
    for (const secret of [card.number, `"cvv":"${card.cvv}"`, card.holder]) {
      expect(readableTextOf(wire[0])).not.toContain(secret);
    }
  });
});

/** A message as its reader sees it: the text, and every base64url run in it decoded. */
function readableTextOf(message: string): string {
  const runs = message.match(/[A-Za-z0-9_-]{16,}/g) ?? [];
  return [message, ...runs.map((run) => Buffer.from(run, 'base64url').toString('utf8'))].join('\n');
}
