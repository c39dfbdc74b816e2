import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { futureExpiry } from '@byrd/platform/testing';
import { completeChallenge, TokensHarness } from './harness.js';

const MASTER_CHALLENGE = '5555341244441115';
const MASTER_FRICTIONLESS = '5448280000000007';
/** The expiry the token was verified with, and the one a later request sends (a typo, a renewal). */
const VERIFIED_EXPIRY = futureExpiry(2);
const NEW_EXPIRY = futureExpiry(4);

/**
 * The same card sent again for a token that was verified and is being charged: its new expiry (and
 * alias) must not reach the token before the new request's own verification succeeded.
 */
describe('re-tokenizing a verified card (POST /api/v2/tokens again)', () => {
  let h: TokensHarness;
  let payments: Rpc;

  beforeAll(async () => {
    h = await TokensHarness.start();
    payments = h.rpcAs('payments');
  });
  afterAll(() => h?.stop());

  /** A token verified with VERIFIED_EXPIRY. */
  async function verifiedToken(number = MASTER_CHALLENGE) {
    const customReference = `customer-${randomUUID()}`;
    const created = await h.createToken(
      { number, expiration: VERIFIED_EXPIRY },
      { CustomReference: customReference, Alias: 'Old alias' },
    );
    expect(created.body.code).toBe('BYRD207');
    await completeChallenge(created.body.action.url, '1234');
    const tokenId: string = created.body.tokenId;
    await expectToken(tokenId, VERIFIED_EXPIRY, 'Old alias');
    return { tokenId, customReference, number };
  }

  function sendAgain(token: { customReference: string; number: string }) {
    return h.createToken(
      { number: token.number, expiration: NEW_EXPIRY },
      { CustomReference: token.customReference, Alias: 'New alias' },
    );
  }

  /** What the merchant reads (GET) and what payments charges (detokenize). */
  async function expectToken(tokenId: string, expiration: string, alias: string) {
    const read = await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`);
    expect(read.body).toMatchObject({ tokenId, expiration, alias });
    const card = await payments.call(RpcSubjects.TokensDetokenize, {
      merchantId: h.merchant.merchantId,
      tokenId,
    });
    expect(card.expiration).toBe(expiration);
  }

  async function expectCharged(tokenId: string) {
    const payment = await h.payWithToken(tokenId);
    expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  }

  it('leaves the token as it was when payments cannot start the new verification', async () => {
    const token = await verifiedToken();
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === RpcSubjects.PaymentsVerifyCard) throw new Error('payments did not answer');
      return call(subject, request);
    }) as typeof rpc.call);
    try {
      const refused = await sendAgain(token);
      expect(refused.status).toBeGreaterThanOrEqual(500);
    } finally {
      spy.mockRestore();
    }
    await expectToken(token.tokenId, VERIFIED_EXPIRY, 'Old alias');
    await expectCharged(token.tokenId);
  });

  it('keeps a verified token whose new verification passed at once but whose answer was lost', async () => {
    const token = await verifiedToken(MASTER_FRICTIONLESS);
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    // Payments verifies the frictionless card (and hands it to the token), then its answer is lost.
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      const answer = await call(subject, request);
      if (subject === RpcSubjects.PaymentsVerifyCard) throw new Error('the answer was lost');
      return answer;
    }) as typeof rpc.call);
    try {
      const lost = await sendAgain(token);
      expect(lost.status).toBeGreaterThanOrEqual(500);
    } finally {
      spy.mockRestore();
    }
    // The merchant's stored token still charges (with the card just verified), never a 404.
    await expectToken(token.tokenId, NEW_EXPIRY, 'New alias');
    await expectCharged(token.tokenId);
  });

  it('leaves the token as it was while the new verification waits, is abandoned or fails', async () => {
    const token = await verifiedToken();
    const waiting = await sendAgain(token);
    expect(waiting.body).toMatchObject({
      code: 'BYRD207',
      tokenId: token.tokenId,
      alias: 'New alias',
      card: { expiration: NEW_EXPIRY },
    });
    // The shopper has not come back (or never will).
    await expectToken(token.tokenId, VERIFIED_EXPIRY, 'Old alias');
    await expectCharged(token.tokenId);

    const failed = await sendAgain(token);
    expect(await completeChallenge(failed.body.action.url, '0000')).toContain('status=Denied');
    await expectToken(token.tokenId, VERIFIED_EXPIRY, 'Old alias');
    await expectCharged(token.tokenId);
  });

  it('takes the new card into the token once its verification passed, challenged or frictionless', async () => {
    for (const number of [MASTER_CHALLENGE, MASTER_FRICTIONLESS]) {
      const token = await verifiedToken(number);
      const again = await sendAgain(token);
      expect(await completeChallenge(again.body.action.url, '1234')).toContain('status=Success');
      await expectToken(token.tokenId, NEW_EXPIRY, 'New alias');
      await expectCharged(token.tokenId);
    }
  });

  it('keeps the card of the verification written last when two re-tokenizations are passed in turn', async () => {
    const token = await verifiedToken();
    const first = await sendAgain(token);
    const second = await h.createToken(
      { number: token.number, expiration: futureExpiry(5) },
      { CustomReference: token.customReference, Alias: 'Newest alias' },
    );
    // The first one's page passes, but its card was replaced by the second one's: nothing changes.
    await completeChallenge(first.body.action.url, '1234');
    await expectToken(token.tokenId, VERIFIED_EXPIRY, 'Old alias');
    await completeChallenge(second.body.action.url, '1234');
    await expectToken(token.tokenId, futureExpiry(5), 'Newest alias');
  });

  it('never takes in the card of a refused one among re-tokenizations raced at once', async () => {
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    let racing = false;
    let asks = 0;
    // While racing, every other verification cannot be started (payments away for it).
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (racing && subject === RpcSubjects.PaymentsVerifyCard && asks++ % 2 === 0)
        throw new Error('payments away');
      return call(subject, request);
    }) as typeof rpc.call);
    try {
      for (let round = 0; round < 4; round++) {
        const token = await verifiedToken();
        const expiries = [3, 4, 5, 6, 7, 8].map((years) => futureExpiry(years));
        racing = true;
        const answers = await Promise.all(
          expiries.map((expiration) =>
            h.createToken(
              { number: token.number, expiration },
              { CustomReference: token.customReference, Alias: `alias ${expiration}` },
            ),
          ),
        );
        racing = false;
        const answered = answers.filter((a) => a.status === 201);
        expect(answered.length).toBeGreaterThan(0);
        expect(answered.length).toBeLessThan(answers.length);
        await expectToken(token.tokenId, VERIFIED_EXPIRY, 'Old alias');
        for (const a of answered) await completeChallenge(a.body.action.url, '1234');
        const read = await h.tokenRequest('GET', `/api/v2/tokens/${token.tokenId}`);
        const allowed = [VERIFIED_EXPIRY, ...answered.map((a) => a.body.card.expiration as string)];
        expect(allowed).toContain(read.body.expiration);
        await expectCharged(token.tokenId);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('takes the new card in before the next charge when the vault missed the verification ending', async () => {
    const token = await verifiedToken();
    const again = await sendAgain(token);
    // Payments dies (or the vault is away) right after recording the verification's success.
    const rpc = h.payments.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    let lost = 0;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === RpcSubjects.TokensVerified && lost++ === 0) throw new Error('vault away');
      return call(subject, request);
    }) as typeof rpc.call);
    try {
      expect(await completeChallenge(again.body.action.url, '1234')).toContain('status=Success');
      expect(lost).toBe(1);
      const read = await h.tokenRequest('GET', `/api/v2/tokens/${token.tokenId}`);
      expect(read.body.expiration).toBe(VERIFIED_EXPIRY);
      await expectCharged(token.tokenId);
    } finally {
      spy.mockRestore();
    }
    await expectToken(token.tokenId, NEW_EXPIRY, 'New alias');
  });
});
