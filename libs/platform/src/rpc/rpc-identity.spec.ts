import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import {
  generateRpcKeyPair,
  parseSigningKey,
  rpcRequestHashOf,
  rpcRequestIdOf,
  RpcIdentity,
} from './rpc-identity.js';

/** A key rotation of an RPC caller: the server trusts its old and new keys side by side. */
describe('RpcIdentity trusted callers', () => {
  const [old, rotated, stranger] = [generateRpcKeyPair(), generateRpcKeyPair(), generateRpcKeyPair()];
  const subject = 'rpc.tokens.detokenize';
  const server = RpcIdentity.fromConfig('gateway-tokens', {
    RPC_TRUSTED_CALLERS: `payments:${old.publicKey}, payments:${rotated.publicKey}`,
  });
  const caller = (signingKey: string) =>
    RpcIdentity.fromConfig('payments', { RPC_SIGNING_KEY: signingKey, RPC_TRUSTED_CALLERS: '' });

  it('accepts a request signed with any key listed for its caller, during a rotation', async () => {
    for (const { privateKey } of [old, rotated]) {
      const signed = await caller(privateKey).sign(subject, { tokenId: 't-1' });
      await expect(server.verify(subject, signed, ['payments'])).resolves.toMatchObject({
        caller: 'payments',
        request: { tokenId: 't-1' },
      });
    }
  });

  it('refuses a key listed for no one, and a caller it does not know', async () => {
    const forged = await caller(stranger.privateKey).sign(subject, {});
    await expect(server.verify(subject, forged, ['payments'])).rejects.toMatchObject({ code: 'BYRD403' });
    const unknown = await RpcIdentity.fromConfig('orders', { RPC_SIGNING_KEY: old.privateKey }).sign(
      subject,
      {},
    );
    await expect(server.verify(subject, unknown, ['orders'])).rejects.toThrow(/caller orders is not trusted/);
  });
});

/** Requests that carry a card, sealed by the caller to the keys of the service that serves them. */
describe('RpcIdentity sealed requests', () => {
  const [payments, tokens, rotatedTokens, orders] = [
    generateRpcKeyPair(),
    generateRpcKeyPair(),
    generateRpcKeyPair(),
    generateRpcKeyPair(),
  ];
  const subject = 'rpc.tokens.create';
  const card = { number: '4242424242424242', cvv: '737' };
  const identity = (service: string, signingKey: string, trusted: string) =>
    RpcIdentity.fromConfig(service, { RPC_SIGNING_KEY: signingKey, RPC_TRUSTED_CALLERS: trusted });
  const trusted = `payments:${payments.publicKey},gateway-tokens:${tokens.publicKey},orders:${orders.publicKey}`;
  const caller = identity('payments', payments.privateKey, trusted);

  it('is opened by the service it is sealed to, and by no other', async () => {
    const sealed = await caller.sealFor('gateway-tokens', await caller.sign(subject, { card }));
    expect(readableTextOf(JSON.stringify(sealed))).not.toContain(card.number);
    await expect(
      identity('gateway-tokens', tokens.privateKey, trusted).verify(subject, sealed, ['payments']),
    ).resolves.toMatchObject({ caller: 'payments', request: { card } });
    await expect(
      identity('orders', orders.privateKey, trusted).verify(subject, sealed, ['payments']),
    ).rejects.toMatchObject({ code: 'BYRD403' });
  });

  it("is opened with either key of the serving service's rotation", async () => {
    const duringRotation = `${trusted},gateway-tokens:${rotatedTokens.publicKey}`;
    const rotating = identity('payments', payments.privateKey, duringRotation);
    for (const key of [tokens, rotatedTokens]) {
      const sealed = await rotating.sealFor('gateway-tokens', await rotating.sign(subject, { card }));
      await expect(
        identity('gateway-tokens', key.privateKey, duringRotation).verify(subject, sealed, ['payments']),
      ).resolves.toMatchObject({ request: { card } });
    }
  });

  it('cannot be sealed to a service whose key the caller does not know', async () => {
    const signed = await caller.sign(subject, { card });
    await expect(caller.sealFor('hosted-form-bff', signed)).rejects.toThrow(
      /no key of hosted-form-bff in RPC_TRUSTED_CALLERS/,
    );
  });
});

/** Every base64url run of a message, decoded, beside the message itself: what a reader of it sees. */
function readableTextOf(message: string): string {
  const runs = message.match(/[A-Za-z0-9_-]{16,}/g) ?? [];
  return [message, ...runs.map((run) => Buffer.from(run, 'base64url').toString('utf8'))].join('\n');
}

/** Replies of authenticated subjects: signed by the serving service for one request. */
describe('RpcIdentity signed replies', () => {
  const [payments, orders, stranger] = [generateRpcKeyPair(), generateRpcKeyPair(), generateRpcKeyPair()];
  const subject = 'rpc.orders.lockPayment';
  const trusted = `payments:${payments.publicKey},orders:${orders.publicKey}`;
  const identity = (service: string, signingKey: string) =>
    RpcIdentity.fromConfig(service, { RPC_SIGNING_KEY: signingKey, RPC_TRUSTED_CALLERS: trusted });
  const caller = identity('payments', payments.privateKey);

  async function served(server: RpcIdentity) {
    const signed = await caller.sign(subject, { orderId: 'o-1' });
    const request = await identity('orders', orders.privateKey).verify(subject, signed, ['payments']);
    const reply = await server.seal({ ok: true, data: { lockedBy: 'tx-1' } }, request, subject);
    return { reply, expected: { subject, server: 'orders', requestId: rpcRequestIdOf(signed) } };
  }

  it('takes the reply the serving service signed for this request', async () => {
    const { reply, expected } = await served(identity('orders', orders.privateKey));
    await expect(caller.open(reply, expected)).resolves.toEqual({ ok: true, data: { lockedBy: 'tx-1' } });
  });

  it('refuses a reply sealed to the reply key by anyone else, unsigned or signed by another key', async () => {
    // The reply key is in clear in the request: any client of the broker can seal to it.
    for (const forger of [
      RpcIdentity.fromConfig('orders', {}),
      identity('orders', stranger.privateKey),
      identity('payments', payments.privateKey),
    ]) {
      const { reply, expected } = await served(forger);
      await expect(caller.open(reply, expected)).rejects.toThrow(/not signed/);
    }
  });

  it('refuses a genuine reply to another request (a replayed one)', async () => {
    const { reply } = await served(identity('orders', orders.privateKey));
    const other = { subject, server: 'orders', requestId: 'another-request' };
    await expect(caller.open(reply, other)).rejects.toThrow(/another request/);
  });
});

/** Refusals in clear of requests the server could not verify: signed for those exact bytes. */
describe('RpcIdentity signed refusals', () => {
  const [payments, orders] = [generateRpcKeyPair(), generateRpcKeyPair()];
  const subject = 'rpc.orders.lockPayment';
  const trusted = `payments:${payments.publicKey},orders:${orders.publicKey}`;
  const identity = (service: string, signingKey: string) =>
    RpcIdentity.fromConfig(service, { RPC_SIGNING_KEY: signingKey, RPC_TRUSTED_CALLERS: trusted });
  const [caller, server] = [identity('payments', payments.privateKey), identity('orders', orders.privateKey)];
  const refusal = { ok: false, error: { code: 'BYRD403', message: 'refused' } } as const;

  async function refused(failure: unknown = new Error('refused')) {
    const signed = await caller.sign(subject, { orderId: 'o-1' });
    const data = new TextEncoder().encode(JSON.stringify(signed));
    const reply = await server.signRefusal(subject, data, refusal, failure);
    const expected = { subject, server: 'orders', requestId: rpcRequestIdOf(signed) };
    return { reply, expected, requestHash: rpcRequestHashOf(data) };
  }

  it('is believed for the request it names, and for no other bytes under the same id', async () => {
    const { reply, expected, requestHash } = await refused();
    await expect(caller.openInClear(reply, { ...expected, requestHash })).resolves.toEqual(refusal);
    // Another client sent its own request under the caller's id: its refusal does not end the call.
    const other = { ...expected, requestHash: rpcRequestHashOf('{"jws":"another"}') };
    await expect(caller.openInClear(reply, other)).rejects.toThrow(/another request/);
  });

  it('is never signed for a replay: a client that resent the request first must not fail the call', async () => {
    const signed = await caller.sign(subject, { orderId: 'o-1' });
    await server.verify(subject, signed, ['payments']);
    const replay = await server.verify(subject, signed, ['payments']).catch((error: unknown) => error);
    const data = new TextEncoder().encode(JSON.stringify(signed));
    await expect(server.signRefusal(subject, data, refusal, replay)).resolves.toEqual(refusal);
  });
});

/** A caller's clock a little ahead of the server's must not make every call of it fail. */
describe('RpcIdentity clock tolerance', () => {
  const payments = generateRpcKeyPair();
  const subject = 'rpc.orders.lockPayment';
  const server = RpcIdentity.fromConfig('orders', { RPC_TRUSTED_CALLERS: `payments:${payments.publicKey}` });
  const signedAt = async (offsetS: number, lifetimeS = 30) => {
    const now = Math.floor(Date.now() / 1000) + offsetS;
    const jws = await new SignJWT({ req: {}, rk: await exportJWK(generateKeyPairSync('x25519').publicKey) })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('payments')
      .setAudience(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeS)
      .setJti(randomUUID())
      .sign(parseSigningKey(payments.privateKey));
    return { jws };
  };

  it('accepts a request signed as a second ends (its claims read one clock, not two)', async () => {
    const caller = RpcIdentity.fromConfig('payments', { RPC_SIGNING_KEY: payments.privateKey });
    const RealDate = Date;
    // A clock 1 ms before a second's end that moves 1 ms at each reading.
    let nowMs = Math.floor(RealDate.now() / 1000) * 1000 + 999;
    class SteppingDate extends RealDate {
      constructor(...args: []) {
        super(...((args as unknown[]).length ? args : [nowMs++]) as []);
      }
      static override now(): number {
        return nowMs++;
      }
    }
    globalThis.Date = SteppingDate as DateConstructor;
    try {
      const signed = await caller.sign(subject, {});
      await expect(server.verify(subject, signed, ['payments'])).resolves.toMatchObject({ caller: 'payments' });
    } finally {
      globalThis.Date = RealDate;
    }
  });

  it('accepts a request signed by a clock 10 s ahead', async () => {
    await expect(server.verify(subject, await signedAt(10), ['payments'])).resolves.toMatchObject({
      caller: 'payments',
    });
  });

  it('refuses one signed 2 minutes ahead, one signed long ago, and one signed to live long', async () => {
    for (const [offset, lifetime] of [
      [120, 30],
      [-60, 30],
      [0, 3_600],
    ]) {
      await expect(
        server.verify(subject, await signedAt(offset, lifetime), ['payments']),
      ).rejects.toMatchObject({
        code: 'BYRD403',
      });
    }
  });
});
