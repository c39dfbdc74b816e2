import { generateRpcKeyPair, RpcIdentity } from './rpc-identity.js';

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
