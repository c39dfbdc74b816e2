import { RpcSubjects, type DetokenizeRpcRequest } from '@byrd/contracts';
import {
  generateRpcKeyPair,
  parseTrustedCallers,
  RpcIdentity,
  parseSigningKey,
  rpcRequestIdOf,
} from '@byrd/platform';
import { futureExpiry } from '@byrd/platform/testing';
import { TokensHarness } from './harness.js';

const VISA = '4242424242424242';

/**
 * `rpc.tokens.detokenize` hands out card numbers and `rpc.tokens.create` takes them, so only
 * payments may call them: the vault checks who signed each request, refuses everyone else and
 * replays, and encrypts what it answers.
 */
describe("who may call the vault's card subjects", () => {
  let h: TokensHarness;
  let request: DetokenizeRpcRequest;

  beforeAll(async () => {
    h = await TokensHarness.start();
    const created = await h.createToken({ number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' });
    request = { merchantId: h.merchant.merchantId, tokenId: created.body.tokenId };
  });
  afterAll(() => h?.stop());

  /** A raw request on the vault's subject, as any program on the NATS server could send it. */
  async function send(body: unknown): Promise<{ text: string; json: any }> {
    const reply = await h.env.nats.nc.request(
      h.env.nats.subject(RpcSubjects.TokensDetokenize),
      JSON.stringify(body),
      {
        timeout: 5_000,
      },
    );
    return { text: reply.string(), json: reply.json() };
  }

  /** An identity signing as `name` with `privateKey`, trusting the vault's answers. */
  function identity(name: string, privateKey: string): RpcIdentity {
    return new RpcIdentity(
      name,
      parseSigningKey(privateKey),
      parseTrustedCallers(`gateway-tokens:${h.env.rpcKeyPair('gateway-tokens').publicKey}`),
    );
  }

  it('answers payments, with the card encrypted to it', async () => {
    const payments = identity('payments', h.env.rpcKeyPair('payments').privateKey);
    const signed = await payments.sign(RpcSubjects.TokensDetokenize, request);
    const reply = await send(signed);
    expect(reply.json).toEqual({ jwe: expect.any(String) });
    expect(reply.text).not.toContain(VISA);
    const expected = {
      subject: RpcSubjects.TokensDetokenize,
      server: 'gateway-tokens',
      requestId: rpcRequestIdOf(signed),
    };
    expect(await payments.open(reply.json, expected)).toEqual({
      ok: true,
      data: expect.objectContaining({ tokenId: request.tokenId, number: VISA, brand: 'VISA' }),
    });
  });

  it('refuses an unsigned request', async () => {
    const reply = await send(request);
    expect(reply.json).toEqual({
      ok: false,
      error: { code: 'BYRD403', message: 'rpc.tokens.detokenize takes signed requests only' },
    });
  });

  it('refuses a service it trusts that is not payments', async () => {
    const orders = identity('orders', h.env.rpcKeyPair('orders').privateKey);
    const reply = await send(await orders.sign(RpcSubjects.TokensDetokenize, request));
    // Signed by the vault (`jws`), so the caller can tell it from another client's forgery.
    expect(reply.json).toEqual({
      ok: false,
      error: { code: 'BYRD403', message: 'orders may not call rpc.tokens.detokenize' },
      jws: expect.any(String),
    });
  });

  it('refuses a caller that claims to be payments without its key', async () => {
    const impostor = identity('payments', generateRpcKeyPair().privateKey);
    const reply = await send(await impostor.sign(RpcSubjects.TokensDetokenize, request));
    expect(reply.json.ok).toBe(false);
    expect(reply.json.error.code).toBe('BYRD403');
    expect(reply.json.error.message).toContain('signature is not valid');
    expect(reply.text).not.toContain(VISA);
  });

  it('refuses a signed request sent again (replay)', async () => {
    const payments = identity('payments', h.env.rpcKeyPair('payments').privateKey);
    const signed = await payments.sign(RpcSubjects.TokensDetokenize, request);
    expect((await send(signed)).json).toEqual({ jwe: expect.any(String) });
    const replayed = await send(signed);
    expect(replayed.json.error).toEqual({
      code: 'BYRD403',
      message: 'this request was already served (replay)',
    });
  });

  it('saves the card of a hosted-form payment (rpc.tokens.create), for payments only', async () => {
    const create = async (caller: RpcIdentity) => {
      const signed = await caller.sign(RpcSubjects.TokensCreate, {
        merchantId: h.merchant.merchantId,
        customReference: 'shopper-7',
        alias: null,
        card: { number: '5448280000000007', expiration: futureExpiry(), holder: 'Ana Silva' },
        transactionMode: 'initialUnescheduled',
      });
      const reply = await h.env.nats.nc.request(
        h.env.nats.subject(RpcSubjects.TokensCreate),
        JSON.stringify(signed),
        { timeout: 5_000 },
      );
      return { text: reply.string(), json: reply.json<any>(), requestId: rpcRequestIdOf(signed) };
    };
    const payments = identity('payments', h.env.rpcKeyPair('payments').privateKey);
    const answer = await create(payments);
    expect(answer.text).not.toContain('5448280000000007');
    const saved = await payments.open<{ tokenId: string }>(answer.json, {
      subject: RpcSubjects.TokensCreate,
      server: 'gateway-tokens',
      requestId: answer.requestId,
    });
    expect(saved).toEqual({
      ok: true,
      data: expect.objectContaining({ customReference: 'shopper-7', maskedCardNumber: '544828******0007' }),
    });
    // Its shopper authenticated while paying: the token is charged without another verification.
    const payment = await h.payWithToken(saved.ok ? saved.data.tokenId : '');
    expect(payment.body).toMatchObject({ status: 'Success' });

    // The hosted form's backend collects the card but never stores it itself; nor may any other service.
    for (const service of ['hosted-form-bff', 'orders']) {
      const refused = await create(identity(service, h.env.rpcKeyPair(service).privateKey));
      expect(refused.json).toEqual({
        ok: false,
        error: { code: 'BYRD403', message: `${service} may not call rpc.tokens.create` },
        jws: expect.any(String),
      });
    }
  });

  it('refuses a request signed for another subject', async () => {
    const payments = identity('payments', h.env.rpcKeyPair('payments').privateKey);
    const signed = await payments.sign(RpcSubjects.TokensCreate, request);
    const reply = await send(signed);
    expect(reply.json.error.code).toBe('BYRD403');
  });
});
