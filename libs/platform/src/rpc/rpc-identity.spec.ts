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
