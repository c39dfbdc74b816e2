import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import { generateRpcKeyPair, parseSigningKey, rpcRequestIdOf, RpcIdentity } from './rpc-identity.js';

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
