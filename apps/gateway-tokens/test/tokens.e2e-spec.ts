import { createHmac, randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import type { VerifyCardRpcRequest } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { futureExpiry, metricValue } from '@byrd/platform/testing';
import { completeChallenge, TokensHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MASTER_CHALLENGE = '5555341244441115';
const MASTER_FRICTIONLESS = '5448280000000007';
const VISA = '4242424242424242';

/** The card vault over HTTP, with payments verifying and charging its tokens. */
describe('card tokens (POST/GET/DELETE /api/v2/tokens, token payments)', () => {
  let h: TokensHarness;

  beforeAll(async () => {
    h = await TokensHarness.start();
  });
  afterAll(() => h?.stop());

  it('creates a token, verifies its cardholder with 3DS, charges it, lists it and deletes it', async () => {
    const customReference = `customer-${randomUUID()}`;
    const created = await h.createToken(
      { number: MASTER_CHALLENGE },
      { CustomReference: customReference, Alias: 'Work card', transactionMode: 'initialUnescheduled' },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      card: {
        number: '555534******1115',
        expiration: futureExpiry(),
        cvv: '***',
        holder: 'Ana Silva',
        aav: null,
        dsTransactionId: null,
        eci: null,
        xid: null,
        verificationMethod: 'ThreeDSecure',
        scheme: 'Undefined',
        usage: 'Unscheduled',
        countryCode: null,
      },
      tokenId: expect.stringMatching(GUID),
      customReference,
      alias: 'Work card',
      action: {
        type: 'redirect',
        url: expect.stringMatching(new RegExp(`^${h.paymentsUrl}/3ds/authenticate/`)),
      },
      code: 'BYRD207',
      description: 'Pending redirect',
    });
    const { tokenId } = created.body;

    // Until the shopper has authenticated, the token cannot be charged.
    const early = await h.payWithToken(tokenId);
    expect(early.status).toBe(422);
    expect(early.body.message).toContain('has not completed the 3D Secure verification');

    const seen: { challengePage?: string } = {};
    const landing = await completeChallenge(created.body.action.url, '1234', seen);
    expect(landing).toBe(`https://shop.example.com/cards?tokenId=${tokenId}&status=Success`);
    // The issuer asks the shopper to confirm the card, not a payment: nothing is charged.
    expect(seen.challengePage).toContain('Confirm your card');
    expect(seen.challengePage).not.toContain('Amount');

    const read = await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      tokenId,
      customReference,
      alias: 'Work card',
      brand: 'MASTER',
      expiration: futureExpiry(),
      maskedCardNumber: '555534******1115',
      isExpired: false,
    });

    // Merchant-initiated: nobody to authenticate, charged at once.
    const mit = await h.payWithToken(tokenId, { transactionMode: 'merchantInitiatedRecurring' });
    expect(mit.status).toBe(201);
    expect(mit.body).toMatchObject({
      code: 'BYRD200',
      status: 'Success',
      brand: 'MASTER',
      transactionMode: 'merchantInitiatedRecurring',
      threeDSecure: null,
      action: null,
    });
    const transaction = await h.call(h.paymentsUrl, 'GET', `/api/v2/transactions/${mit.body.transactionId}`);
    expect(transaction.body).toMatchObject({
      tokenId,
      maskedCardNumber: '555534******1115',
      status: 'Success',
    });

    // Cardholder-initiated: the sandbox 3DS rules apply again (this card is always challenged).
    const cit = await h.payWithToken(tokenId, { transactionMode: 'cardHolderInitiatedUnescheduled' });
    expect(cit.status).toBe(201);
    expect(cit.body).toMatchObject({ code: 'BYRD207', status: 'Created' });
    expect(await completeChallenge(cit.body.action.url)).toBe(
      `https://shop.example.com/return?transactionId=${cit.body.transactionId}&status=Success`,
    );

    const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${customReference}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      data: [read.body],
      success: true,
      errorCode: null,
      pagination: { pageNumber: 1, pageSize: 20, total: 1, totalAvailable: 1 },
    });

    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${tokenId}`)).status).toBe(204);
    expect((await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`)).status).toBe(404);
    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${tokenId}`)).status).toBe(404);
    const gone = await h.payWithToken(tokenId);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('BYRD901');
  });

  it("counts the vault's operations on GET /metrics, HTTP and RPC alike, by result", async () => {
    const vaultCount = async (operation: string, result: string) =>
      metricValue(
        await (await fetch(`${h.tokensUrl}/metrics`)).text(),
        'vault_operation_duration_seconds_count',
        {
          operation,
          result,
        },
      ) ?? 0;
    const counts = async () => ({
      stored: await vaultCount('tokenize', 'stored'),
      refreshed: await vaultCount('tokenize', 'refreshed'),
      detokenized: await vaultCount('detokenize', 'ok'),
      deleted: await vaultCount('delete', 'ok'),
      deleteMissing: await vaultCount('delete', 'not_found'),
    });
    const before = await counts();

    const customReference = `metrics-${randomUUID()}`;
    const created = await h.createToken({ number: VISA }, { CustomReference: customReference });
    await h.createToken({ number: VISA }, { CustomReference: customReference });
    // Verifying a card's cardholder reads it too: count the payment's read on its own.
    const detokenizedBeforePayment = (await counts()).detokenized;
    const paid = await h.payWithToken(created.body.tokenId, {
      transactionMode: 'merchantInitiatedRecurring',
    });
    expect(paid.body).toMatchObject({ code: 'BYRD200' });
    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${created.body.tokenId}`)).status).toBe(204);
    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${created.body.tokenId}`)).status).toBe(404);

    expect(await counts()).toEqual({
      stored: before.stored + 1,
      refreshed: before.refreshed + 1,
      detokenized: detokenizedBeforePayment + 1,
      deleted: before.deleted + 1,
      deleteMissing: before.deleteMissing + 1,
    });
  });

  it('sends a frictionless cardholder straight back, verified', async () => {
    const created = await h.createToken({ number: MASTER_FRICTIONLESS });
    expect(created.body.code).toBe('BYRD207');
    const landing = await fetch(created.body.action.url, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe(
      `https://shop.example.com/cards?tokenId=${created.body.tokenId}&status=Success`,
    );
    const payment = await h.payWithToken(created.body.tokenId, {
      transactionMode: 'cardHolderInitiatedUnescheduled',
    });
    expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  });

  it('keeps a token whose shopper failed 3DS unusable', async () => {
    const created = await h.createToken({ number: MASTER_CHALLENGE });
    expect(await completeChallenge(created.body.action.url, '0000')).toBe(
      `https://shop.example.com/cards?tokenId=${created.body.tokenId}&status=Denied`,
    );
    const payment = await h.payWithToken(created.body.tokenId);
    expect(payment.status).toBe(422);
    expect(payment.body).toMatchObject({
      code: 'BYRD205',
      message: expect.stringContaining('verification failed'),
    });
  });

  it('records a new token as waiting for its verification before payments is asked to start it', async () => {
    // Were the vault to die while asking (or payments to fail and the clean-up with it), the token
    // left behind must still be one that cannot be charged: its verification is written ahead.
    const rpc = h.tokens.get(Rpc);
    const ask = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const whileAsking: { request?: VerifyCardRpcRequest; stored?: unknown; payment?: unknown } = {};
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === 'rpc.payments.verifyCard') {
        const verify = request as VerifyCardRpcRequest;
        whileAsking.request = verify;
        const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
        await db.initialize();
        [whileAsking.stored] = await db.query(`SELECT verification_id FROM card_tokens WHERE id = $1`, [
          verify.tokenId,
        ]);
        await db.destroy();
        const payment = await h.payWithToken(verify.tokenId);
        whileAsking.payment = { status: payment.status, body: payment.body };
      }
      return ask(subject, request);
    }) as typeof rpc.call);
    try {
      const created = await h.createToken({ number: MASTER_FRICTIONLESS });
      expect(created.body.code).toBe('BYRD207');
      const { verificationId } = whileAsking.request!;
      expect(verificationId).toMatch(GUID);
      expect(whileAsking.stored).toEqual({ verification_id: verificationId });
      expect(whileAsking.payment).toMatchObject({ status: 422, body: { code: 'BYRD205' } });
    } finally {
      spy.mockRestore();
    }
  });

  /**
   * Hands each `rpc.payments.verifyCard` the vault makes to `onAsk`, with its 1-based number and
   * `forward` (the real call); every other RPC goes through. Undo with the spy's `mockRestore`.
   */
  function onVerifyCard(onAsk: (n: number, forward: () => Promise<unknown>) => Promise<unknown>) {
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    let asks = 0;
    return jest
      .spyOn(rpc, 'call')
      .mockImplementation((async (subject: string, request: unknown) =>
        subject === 'rpc.payments.verifyCard'
          ? onAsk(++asks, () => call(subject, request))
          : call(subject, request)) as typeof rpc.call);
  }

  /** A tokenization of the challenge card under `reference`. */
  const tokenize = (reference: string) =>
    h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference }) as Promise<{
      status: number;
      body: { tokenId: string; action: { url: string } };
    }>;

  /** A promise and the function that resolves it: one step of a test's interleaving. */
  function step(): [Promise<void>, () => void] {
    let done!: () => void;
    return [new Promise<void>((resolve) => (done = resolve)), () => done()];
  }

  it('keeps a token another request for the same card answered with, when the first one fails', async () => {
    // Request A stores the card and asks for its verification, which fails; meanwhile request B for
    // the same card and reference got the same token and started its own. A's clean-up must not
    // delete the token B's merchant now holds.
    const reference = `customer-${randomUUID()}`;
    let second: ReturnType<typeof tokenize> | undefined;
    const spy = onVerifyCard(async (n, forward) => {
      if (n > 1) return forward();
      second = tokenize(reference);
      await second;
      throw new Error('payments did not answer');
    });
    try {
      const failed = await tokenize(reference);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      const answered = await second!;
      expect(answered.status).toBe(201);
      expect((await h.tokenRequest('GET', `/api/v2/tokens/${answered.body.tokenId}`)).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps a token another request for the same card is still asking about, when the first one fails', async () => {
    // Request A stores the card and asks for its verification; request B for the same card and
    // reference gets the same token and asks for its own. A's ask fails while B's is still on its
    // way: A's clean-up must leave the token B is about to answer with (handed to B).
    const reference = `customer-${randomUUID()}`;
    const [secondIsAsking, secondAsking] = step();
    const [secondMayAnswer, answerSecond] = step();
    let second: ReturnType<typeof tokenize> | undefined;
    const spy = onVerifyCard(async (n, forward) => {
      if (n === 1) {
        second = tokenize(reference);
        await secondIsAsking;
        throw new Error('payments did not answer');
      }
      if (n === 2) {
        secondAsking();
        await secondMayAnswer;
      }
      return forward();
    });
    try {
      const failed = await tokenize(reference);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      answerSecond();
      const answered = await second!;
      expect(answered.status).toBe(201);
      const { tokenId } = answered.body;
      expect((await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`)).status).toBe(200);
      await completeChallenge(answered.body.action.url, '1234');
      expect((await h.payWithToken(tokenId)).body).toMatchObject({ code: 'BYRD200', status: 'Success' });
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps no token when both of two requests for the same card fail, the first while the second is asking', async () => {
    // As above, but B fails too, after A: neither answered with the token, so none may be kept,
    // listed or read.
    const reference = `customer-${randomUUID()}`;
    const [secondIsAsking, secondAsking] = step();
    const [secondMayFail, failSecond] = step();
    let second: ReturnType<typeof tokenize> | undefined;
    const spy = onVerifyCard(async (n) => {
      if (n === 1) {
        second = tokenize(reference);
        await secondIsAsking;
      } else {
        secondAsking();
        await secondMayFail;
      }
      throw new Error('payments did not answer');
    });
    try {
      const failed = await tokenize(reference);
      expect(failed.status).toBeGreaterThanOrEqual(500);
      failSecond();
      expect((await second!).status).toBeGreaterThanOrEqual(500);
      const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}`);
      expect(listed.body).toMatchObject({ data: [] });
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps no token when two requests for the same card fail at the same moment, many rounds', async () => {
    // Both clean-ups run together: they take the token's row lock in turn, whichever comes first.
    for (let round = 0; round < 10; round++) {
      const reference = `customer-${randomUUID()}`;
      const [bothAsk, bothAsking] = step();
      const spy = onVerifyCard(async (n) => {
        if (n === 2) bothAsking();
        await bothAsk;
        throw new Error('payments did not answer');
      });
      try {
        const answers = await Promise.all([tokenize(reference), tokenize(reference)]);
        expect(answers.map((a) => a.status >= 500)).toEqual([true, true]);
        const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}`);
        expect({ round, listed: listed.body }).toMatchObject({ round, listed: { data: [] } });
      } finally {
        spy.mockRestore();
      }
    }
  });

  it('charges a token once the shopper passed the verification of either of two tokenizations at once', async () => {
    // A double submit: both requests answer 201 with the same token and a 3DS page each; the vault
    // keeps the id of the verification written last. The shopper may follow either page.
    for (const followed of ['written first', 'written last'] as const) {
      const rpc = h.tokens.get(Rpc);
      const ask = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
      const reference = `customer-${randomUUID()}`;
      let first = true;
      let second: Promise<{ status: number; body: { tokenId: string; action: { url: string } } }> | undefined;
      const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
        if (subject === 'rpc.payments.verifyCard' && first) {
          first = false;
          // The second request stores the card and starts its verification while this one asks.
          second = h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
          await second;
        }
        return ask(subject, request);
      }) as typeof rpc.call);
      try {
        const one = await h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
        const other = await second!;
        expect([one.status, other.status]).toEqual([201, 201]);
        expect(other.body.tokenId).toBe(one.body.tokenId);
        const page = followed === 'written first' ? one.body.action.url : other.body.action.url;
        await completeChallenge(page, '1234');
        expect((await h.payWithToken(one.body.tokenId)).body).toMatchObject({
          code: 'BYRD200',
          status: 'Success',
        });
      } finally {
        spy.mockRestore();
      }
    }
  });

  it('needs no redirect when the merchant sends the 3DS data', async () => {
    const created = await h.createToken({
      number: VISA,
      aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
      eci: '05',
      dsTransactionId: randomUUID(),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      code: 'BYRD200',
      action: null,
      card: { eci: '05', number: '424242******4242' },
    });
    const payment = await h.payWithToken(created.body.tokenId, {
      transactionMode: 'merchantInitiatedUnescheduled',
    });
    expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success', brand: 'VISA' });

    const partial = await h.createToken({ number: VISA, aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=' });
    expect(partial.status).toBe(400);
    expect(partial.body.errors).toEqual([
      { field: 'Card.eci', message: 'is required with 3DS authentication data' },
    ]);
  });

  it('verifies a card waiting for its shopper when the merchant sends it again with 3DS data', async () => {
    const reference = `customer-${randomUUID()}`;
    const pending = await h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
    expect(pending.body.code).toBe('BYRD207');
    const again = await h.createToken(
      { number: MASTER_CHALLENGE, aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', eci: '02' },
      { CustomReference: reference },
    );
    expect(again.body).toMatchObject({ code: 'BYRD200', action: null, tokenId: pending.body.tokenId });
    const payment = await h.payWithToken(pending.body.tokenId, {
      transactionMode: 'merchantInitiatedUnescheduled',
    });
    expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  });

  it('keeps a card the merchant authenticated chargeable when it is sent again without 3DS data', async () => {
    const reference = `customer-${randomUUID()}`;
    const authenticated = await h.createToken(
      {
        number: MASTER_CHALLENGE,
        aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
        eci: '02',
        dsTransactionId: randomUUID(),
      },
      { CustomReference: reference },
    );
    expect(authenticated.body).toMatchObject({ code: 'BYRD200', action: null });
    // The same card again, as a shop's "save card" step does, with nothing to prove now.
    const again = await h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
    expect(again.body).toMatchObject({ code: 'BYRD200', action: null, tokenId: authenticated.body.tokenId });
    const payment = await h.payWithToken(authenticated.body.tokenId, {
      transactionMode: 'merchantInitiatedUnescheduled',
    });
    expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  });

  it('keeps a card authenticated by one of two tokenizations at once chargeable', async () => {
    // The token waits on a verification. S brings 3DS data, C the same card without: both read the
    // token before either writes (held back by a lock on its row). C must not bring a pending
    // verification back over the authentication S wrote, as neither order of the two would.
    const reference = `customer-${randomUUID()}`;
    const pending = await h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
    expect(pending.body.code).toBe('BYRD207');
    const { tokenId } = pending.body;
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    const lock = db.createQueryRunner();
    const waitingOnLock = async (requests: number) => {
      for (let tries = 0; tries < 400; tries++) {
        const [{ waiting }] = await db.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (waiting >= requests) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`${requests} request(s) never waited on the token's row`);
    };
    try {
      await lock.startTransaction();
      await lock.query(`SELECT 1 FROM card_tokens WHERE id = $1 FOR UPDATE`, [tokenId]);
      const s = h.createToken(
        { number: MASTER_CHALLENGE, aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', eci: '02' },
        { CustomReference: reference },
      );
      await waitingOnLock(1);
      const c = h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: reference });
      await waitingOnLock(2);
      await lock.commitTransaction();
      const [authenticated, again] = await Promise.all([s, c]);
      expect(authenticated.body).toMatchObject({ code: 'BYRD200', tokenId });
      expect(again.status).toBe(201);
      expect(await db.query(`SELECT verification_id FROM card_tokens WHERE id = $1`, [tokenId])).toEqual([
        { verification_id: null },
      ]);
      expect(again.body).toMatchObject({ code: 'BYRD200', action: null, tokenId });
      const payment = await h.payWithToken(tokenId, { transactionMode: 'merchantInitiatedUnescheduled' });
      expect(payment.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
    } finally {
      if (lock.isTransactionActive) await lock.rollbackTransaction();
      await lock.release();
      await db.destroy();
    }
  });

  it('keeps nothing derived from the CVV under an idempotency-key: a retry with another CVV is the same request', async () => {
    const key = randomUUID();
    const reference = `customer-${randomUUID()}`;
    const card = (cvv: string) => ({ number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', cvv });
    const tokenize = (cvv: string) =>
      h.createToken(card(cvv), { CustomReference: reference }, { 'idempotency-key': key });
    const created = await tokenize('731');
    expect(created.status).toBe(201);
    const retried = await tokenize('123');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.tokenId).toBe(created.body.tokenId);

    // Whoever holds the API key and a copy of the table cannot find the CVV by trying all 1,000.
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    try {
      const [{ request_hash: stored }] = await db.query(
        `SELECT request_hash FROM idempotency_keys WHERE key = $1`,
        [key],
      );
      const sent = (cvv: string) => ({
        Type: 'Card',
        CustomReference: reference,
        Alias: 'My card',
        RedirectUrl: 'https://shop.example.com/cards',
        Card: {
          expiration: futureExpiry(),
          cvv,
          holder: 'Ana Silva',
          number: VISA,
          eci: '05',
          aav: card(cvv).aav,
        },
      });
      const secret = h.merchant.apiKey.trim().toLowerCase();
      const found = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0')).filter(
        (cvv) =>
          createHmac('sha256', secret)
            .update(`POST /api/v2/tokens\n${JSON.stringify(sent(cvv))}`)
            .digest('hex') === stored,
      );
      expect(found).toEqual([]);
    } finally {
      await db.destroy();
    }
  });

  it('erases the answers kept under idempotency-keys with the card when its token is deleted', async () => {
    // A create answer echoes the holder, masked number, expiry and 3DS values; kept for retries of
    // its key, it would outlive the card by up to 24 h.
    const holder = `Erased ${randomUUID().slice(0, 8)}`;
    const reference = `customer-${randomUUID()}`;
    const key = randomUUID();
    const tokenize = () =>
      h.createToken(
        { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', holder },
        { CustomReference: reference },
        { 'idempotency-key': key },
      );
    const created = await tokenize();
    expect(created.status).toBe(201);
    const { tokenId } = created.body;
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    const kept = () =>
      db.query(
        `SELECT key FROM idempotency_keys
          WHERE strpos(response_body::text, $1) > 0 OR strpos(response_body::text, $2) > 0`,
        [holder, tokenId],
      );
    try {
      expect(await kept()).toEqual([{ key }]);
      expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${tokenId}`)).status).toBe(204);
      expect(await kept()).toEqual([]);
    } finally {
      await db.destroy();
    }
    // A retry of the key is a new request now, not a replay of the erased token.
    const retried = await tokenize();
    expect(retried.status).toBe(201);
    expect(retried.body.tokenId).not.toBe(tokenId);
    expect((await h.tokenRequest('GET', `/api/v2/tokens/${retried.body.tokenId}`)).status).toBe(200);
  });

  it('replays a delete retried under its idempotency-key (204, not 404), keeping nothing of the card', async () => {
    const created = await h.createToken({ number: VISA }, { CustomReference: `customer-${randomUUID()}` });
    const { tokenId } = created.body;
    const key = randomUUID();
    const remove = (path = `/api/v2/tokens/${tokenId}`) =>
      h.tokenRequest('DELETE', path, undefined, { 'idempotency-key': key });
    expect((await remove()).status).toBe(204);
    // The merchant's retry of a delete whose answer it lost: the first answer, the card still gone.
    const retried = await remove();
    expect(retried.status).toBe(204);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect((await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`)).status).toBe(404);
    // Without the key it is a new request: the token is gone.
    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${tokenId}`)).status).toBe(404);
    // The key names one request: another token's delete under it is refused.
    expect((await remove(`/api/v2/tokens/${randomUUID()}`)).status).toBe(422);

    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    try {
      // A delete's answer has no body: nothing of the card is kept under the key.
      expect(
        await db.query(`SELECT response_status, response_body FROM idempotency_keys WHERE key = $1`, [key]),
      ).toEqual([{ response_status: 204, response_body: null }]);
    } finally {
      await db.destroy();
    }
  });

  it('keeps no answer of a create whose token was deleted while it asked for the verification', async () => {
    // The delete erases the answers stored so far; this create's answer is stored after it.
    const holder = `Raced ${randomUUID().slice(0, 8)}`;
    const reference = `customer-${randomUUID()}`;
    const key = randomUUID();
    const tokenize = () =>
      h.createToken(
        { number: MASTER_CHALLENGE, holder },
        { CustomReference: reference },
        { 'idempotency-key': key },
      );
    const rpc = h.tokens.get(Rpc);
    const ask = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    let deleted: number | undefined;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      const answer = await ask(subject, request);
      if (subject === 'rpc.payments.verifyCard' && deleted === undefined) {
        const { tokenId } = request as VerifyCardRpcRequest;
        deleted = (await h.tokenRequest('DELETE', `/api/v2/tokens/${tokenId}`)).status;
      }
      return answer;
    }) as typeof rpc.call);
    let created: Awaited<ReturnType<typeof tokenize>>;
    try {
      created = await tokenize();
    } finally {
      spy.mockRestore();
    }
    expect(created.status).toBe(201);
    expect(deleted).toBe(204);
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    try {
      const [kept] = await db.query(
        `SELECT response_status, response_body FROM idempotency_keys WHERE key = $1`,
        [key],
      );
      expect(kept).toEqual({ response_status: null, response_body: null });
    } finally {
      await db.destroy();
    }
    // A retry of the key runs as a new request instead of replaying the erased card.
    const retried = await tokenize();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body.tokenId).not.toBe(created.body.tokenId);
  });

  it('erases an answer stored while its token is being deleted, whichever commits first', async () => {
    // The two statements as the guard and DeleteToken run them, on two connections, interleaved
    // both ways: the answer's check waits for the delete in flight, or the delete for the answer.
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL, poolSize: 4 });
    await db.initialize();
    const answering = db.createQueryRunner();
    const deleting = db.createQueryRunner();
    try {
      for (const first of ['answer', 'delete'] as const) {
        const { tokenId } = (
          await h.createToken(
            { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' },
            { CustomReference: `customer-${randomUUID()}` },
          )
        ).body;
        const key = randomUUID();
        await db.query(
          `INSERT INTO idempotency_keys (merchant_id, key, request_hash, lease_owner, lease_until)
           SELECT merchant_id, $2, 'hash', $3, now() + interval '1 minute' FROM card_tokens WHERE id = $1`,
          [tokenId, key, randomUUID()],
        );
        const storeAnswer = () =>
          answering.query(
            `UPDATE idempotency_keys SET response_status = 201, response_body = $2, lease_owner = NULL
              WHERE key = $1`,
            [key, JSON.stringify({ tokenId, holder: 'Ana Silva' })],
          );
        const deleteToken = async () => {
          await deleting.query(`DELETE FROM card_tokens WHERE id = $1`, [tokenId]);
          await deleting.query(
            `DELETE FROM idempotency_keys WHERE response_body ? 'tokenId' AND response_body ->> 'tokenId' = $1`,
            [tokenId],
          );
          await deleting.commitTransaction();
        };
        await answering.startTransaction();
        await deleting.startTransaction();
        if (first === 'answer') {
          await storeAnswer();
          const deleted = deleteToken(); // waits for the answer's key share lock
          await answering.commitTransaction();
          await deleted;
        } else {
          await deleting.query(`DELETE FROM card_tokens WHERE id = $1`, [tokenId]);
          const stored = storeAnswer(); // waits for the delete's commit, then finds no token
          await deleting.query(
            `DELETE FROM idempotency_keys WHERE response_body ? 'tokenId' AND response_body ->> 'tokenId' = $1`,
            [tokenId],
          );
          await deleting.commitTransaction();
          await stored;
          await answering.commitTransaction();
        }
        const kept = await db.query(
          `SELECT key FROM idempotency_keys WHERE strpos(response_body::text, $1) > 0`,
          [tokenId],
        );
        expect({ first, kept }).toEqual({ first, kept: [] });
      }
    } finally {
      for (const runner of [answering, deleting]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
      await db.destroy();
    }
  });

  it('refuses junk 3DS data with a 400 naming each field, and stores nothing', async () => {
    const reference = `customer-${randomUUID()}`;
    const junk = await h.createToken(
      { number: MASTER_CHALLENGE, aav: ' ', eci: 'ZZ' },
      { CustomReference: reference },
    );
    expect(junk.status).toBe(400);
    expect(junk.body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
    expect(junk.body.errors).toEqual([
      {
        field: 'Card.eci',
        message: 'must be 02 (authenticated), 01 (attempted) or 00 (not authenticated) for a MASTER card',
      },
      { field: 'Card.aav', message: expect.stringContaining('20-byte CAVV/AAV in base64') },
    ]);
    // A Visa ECI on a Mastercard, an id that is no UUID, an XID that is no 20 bytes.
    const wrong = await h.createToken(
      {
        number: MASTER_CHALLENGE,
        aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
        eci: '05',
        dsTransactionId: 'ds-1',
        xid: 'AAAB',
      },
      { CustomReference: reference },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'Card.eci',
      'Card.dsTransactionId',
      'Card.xid',
    ]);
    const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}`);
    expect(listed.body.data).toEqual([]);
  });

  it('sends a card whose 3DS data says "not authenticated" (ECI 07) through the 3DS redirect', async () => {
    const created = await h.createToken({
      number: '4000000000003220', // VISA, always challenged
      eci: '07',
      dsTransactionId: randomUUID(),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      code: 'BYRD207',
      action: {
        type: 'redirect',
        url: expect.stringMatching(new RegExp(`^${h.paymentsUrl}/3ds/authenticate/`)),
      },
    });
    const { tokenId } = created.body;

    // No verification yet: even a merchant-initiated charge is refused.
    const early = await h.payWithToken(tokenId, { transactionMode: 'merchantInitiatedRecurring' });
    expect(early.status).toBe(422);
    expect(early.body.message).toContain('has not completed the 3D Secure verification');

    expect(await completeChallenge(created.body.action.url, '1234')).toBe(
      `https://shop.example.com/cards?tokenId=${tokenId}&status=Success`,
    );
    const charged = await h.payWithToken(tokenId, { transactionMode: 'merchantInitiatedRecurring' });
    expect(charged.body).toMatchObject({ code: 'BYRD200', status: 'Success', brand: 'VISA' });
  });

  it('refuses a NUL or a lone surrogate anywhere in the body, naming the field', async () => {
    const reference = `customer-${randomUUID()}`;
    const nul = await h.createToken(
      { number: VISA, holder: 'Ana\u0000Silva' },
      { CustomReference: reference },
    );
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({
      code: 'BYRD900',
      errors: [{ field: 'Card.holder', message: expect.stringContaining('NUL') }],
    });
    const surrogate = await h.createToken(
      { number: VISA },
      { CustomReference: reference, Alias: 'card \uD83D' },
    );
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.errors).toEqual([
      { field: 'Alias', message: expect.stringContaining('surrogate') },
    ]);
    const query = await h.tokenRequest(
      'GET',
      `/api/v2/tokens?customReference=${encodeURIComponent('a\u0000')}`,
    );
    expect(query.status).toBe(400);
    expect(query.body.errors[0].field).toBe('customReference');
    const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}`);
    expect(listed.body.data).toEqual([]);
  });

  it('recognises the same card for the same customer reference, and only there', async () => {
    const reference = `customer-${randomUUID()}`;
    const first = await h.createToken(
      { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' },
      { CustomReference: reference },
    );
    const again = await h.createToken(
      { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', expiration: futureExpiry(3) },
      { CustomReference: reference, Alias: 'Renewed' },
    );
    expect(again.body.tokenId).toBe(first.body.tokenId);
    const read = await h.tokenRequest('GET', `/api/v2/tokens/${first.body.tokenId}`);
    expect(read.body).toMatchObject({ expiration: futureExpiry(3), alias: 'Renewed' });
    const other = await h.createToken(
      { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' },
      { CustomReference: `${reference}-2` },
    );
    expect(other.body.tokenId).not.toBe(first.body.tokenId);
  });

  it('treats an empty CustomReference as none: the same card stored both ways is one token', async () => {
    const card = { number: '5448280000000007', eci: '02', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' };
    const empty = await h.createToken(card, { CustomReference: '' });
    const none = await h.createToken(card, { CustomReference: undefined });
    expect([empty.status, none.status]).toEqual([201, 201]);
    expect(none.body.tokenId).toBe(empty.body.tokenId);
    expect(none.body.customReference).toBeNull();
  });

  it('reads an empty query value as no filter, as the published ?customReference=&isExpired= is sent', async () => {
    const shop = await h.env.createMerchant('Empty Filters Shop');
    const as = { 'x-api-key': shop.apiKey };
    const aav = 'AAABBEg0VhI0VniQEjRWAAAAAAA=';
    const created = [
      await h.createToken({ number: VISA, eci: '05', aav }, { CustomReference: '' }, as),
      await h.createToken({ number: MASTER_FRICTIONLESS, eci: '02', aav }, { CustomReference: 'c-1' }, as),
    ];
    expect(created.map((c) => c.status)).toEqual([201, 201]);
    const all = await h.tokenRequest('GET', '/api/v2/tokens', undefined, as);
    expect(all.body.pagination.totalAvailable).toBe(2);
    for (const query of ['customReference=', 'isExpired=', 'customReference=&isExpired=']) {
      const listed = await h.tokenRequest('GET', `/api/v2/tokens?${query}`, undefined, as);
      expect({ query, status: listed.status, body: listed.body }).toEqual({
        query,
        status: 200,
        body: all.body,
      });
    }
  });

  it('stores a card sent at once with an empty and with no CustomReference as one token', async () => {
    const card = { number: '4000056655665556', eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' };
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.createToken(card, { CustomReference: i % 2 === 0 ? '' : undefined }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((a) => a.body.tokenId)).size).toBe(1);
  });

  it('refuses bad cards with a clear 400 naming each field', async () => {
    const luhn = await h.createToken({ number: '4242424242424241', expiration: '01/20' });
    expect(luhn.status).toBe(400);
    expect(luhn.body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
    expect(luhn.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'Card.expiration',
      'Card.number',
    ]);
    const amex = await h.createToken({ number: '378282246310005', cvv: '123' });
    expect(amex.body.errors).toEqual([{ field: 'Card.cvv', message: 'must be 4 digits for AMEX' }]);
    const noCard = await h.tokenRequest('POST', '/api/v2/tokens', { Type: 'Card' });
    expect(noCard.status).toBe(400);
    expect(noCard.body.errors[0].field).toBe('Card');
    for (const key of ['Card', 'card']) {
      const listed = await h.tokenRequest('POST', '/api/v2/tokens', { Type: 'Card', [key]: [] });
      expect(listed.status).toBe(400);
      expect(listed.body.errors[0].field).toBe('Card');
    }
    expect((await h.tokenRequest('GET', '/api/v2/tokens/not-a-guid')).status).toBe(400);
    expect((await h.tokenRequest('GET', '/api/v2/tokens?isExpired=maybe')).status).toBe(400);
  });

  it("answers another merchant's token like a missing one", async () => {
    const created = await h.createToken({ number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' });
    const other = await h.env.createMerchant('Other Shop');
    const as = { 'x-api-key': other.apiKey };
    expect(
      (await h.tokenRequest('GET', `/api/v2/tokens/${created.body.tokenId}`, undefined, as)).status,
    ).toBe(404);
    expect(
      (await h.tokenRequest('DELETE', `/api/v2/tokens/${created.body.tokenId}`, undefined, as)).status,
    ).toBe(404);
    const payment = await h.payWithToken(created.body.tokenId, {}, as);
    expect(payment.status).toBe(404);
    expect((await h.tokenRequest('GET', `/api/v2/tokens/${created.body.tokenId}`)).status).toBe(200);
  });

  it('refuses an expired token with BYRD240 and lists it as expired', async () => {
    const reference = `customer-${randomUUID()}`;
    const created = await h.createToken(
      { number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' },
      { CustomReference: reference },
    );
    // Time passes: the card's expiry month is over.
    const db = new DataSource({ type: 'postgres', url: h.tokensConfig.DATABASE_URL });
    await db.initialize();
    await db.query(`UPDATE card_tokens SET expiration = '10/25', expires_at = '2025-11-01' WHERE id = $1`, [
      created.body.tokenId,
    ]);
    await db.destroy();

    const payment = await h.payWithToken(created.body.tokenId);
    expect(payment.status).toBe(422);
    expect(payment.body).toMatchObject({ code: 'BYRD240', description: 'Token is expired' });
    const expired = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}&isExpired=true`);
    expect(expired.body.data).toEqual([
      expect.objectContaining({ tokenId: created.body.tokenId, isExpired: true }),
    ]);
    const valid = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${reference}&isExpired=false`);
    expect(valid.body.data).toEqual([]);
  });

  it('completes a two-step payment with a token', async () => {
    const created = await h.createToken({ number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' });
    const first = await h.call(h.paymentsUrl, 'POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
    });
    expect(first.body).toMatchObject({ code: 'BYRD010', status: 'Created' });
    const paid = await h.call(h.paymentsUrl, 'POST', `/api/v2/payment/${first.body.transactionId}/pay`, {
      tokenId: created.body.tokenId,
    });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      status: 'Success',
      brand: 'VISA',
      transactionMode: 'cardHolderInitiatedUnescheduled',
    });
  });

  it('takes token payments from the merchant backend only, not a checkout key', async () => {
    const created = await h.createToken({ number: VISA, eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' });
    const browser = await h.call(
      h.paymentsUrl,
      'POST',
      `/api/v2/payment?checkoutKey=${randomUUID()}`,
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: randomUUID(),
        tokenId: created.body.tokenId,
      },
      { 'x-api-key': '' },
    );
    expect(browser.status).toBe(400);
    expect(browser.body.errors[0].field).toBe('tokenId');
  });
});
