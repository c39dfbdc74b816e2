import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { RecoverAcquirerCalls, SaveCardsLeftBehind } from '@byrd/payments';
import { Rpc } from '@byrd/platform';
import { RpcSubjects } from '@byrd/contracts';
import { authenticateWithSdk, futureExpiry } from '@byrd/platform/testing';
import { TokensHarness, vaultKeys } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FRICTIONLESS = '5448280000000007';
const CHALLENGE = '5555341244441115';
/** Frictionless; the acquirer approves it but its answer is lost (the caller hears TemporaryFailed). */
const ANSWER_LOST = '5201282999005515';
/** Past the grace the paying request has to save the card itself. */
const afterGrace = () => new Date(Date.now() + 31_000);
const card = (number: string) => ({ number, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' });

/**
 * "Save my card" in the hosted form: the shopper pays an order that offers it
 * (`paymentOptions.tokenOptions.customReference`), payments stores the card in the vault once the
 * payment succeeded, and the merchant charges that token later without the shopper.
 */
describe('hosted form: save my card', () => {
  let h: TokensHarness;
  let bff: Rpc;
  const keys = vaultKeys();

  beforeAll(async () => {
    // An acquirer call whose answer was lost is settled by the recovery after 2.1 s.
    h = await TokensHarness.start(keys, {
      withOrders: true,
      paymentsEnv: { ACQUIRER_TIMEOUT_MS: '2000', ACQUIRER_RECOVERY_AFTER_MS: '2100' },
    });
    bff = h.rpcAs('hosted-form-bff');
  });
  afterAll(() => h?.stop());

  /** An order offering to save the card under a reference of its own. */
  async function orderSavingCards() {
    const customReference = `shopper-${randomUUID().slice(0, 8)}`;
    const { status, body } = await h.createOrder({ paymentOptions: { tokenOptions: { customReference } } });
    expect(status).toBe(201);
    return { ...(body as { orderId: string; checkoutKey: string }), customReference };
  }

  const payAndSave = (order: { orderId: string; checkoutKey: string }, number: string) =>
    bff.call('rpc.payments.create', {
      orderId: order.orderId,
      checkoutKey: order.checkoutKey,
      payment: { type: 'card', card: card(number) },
      saveCard: true,
    });

  const getPayment = (order: { orderId: string; checkoutKey: string }, transactionId: string) =>
    bff.call('rpc.payments.get', { orderId: order.orderId, checkoutKey: order.checkoutKey, transactionId });

  /** The merchant's tokens of a customer reference. */
  async function tokensOf(customReference: string): Promise<any[]> {
    const { status, body } = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${customReference}`);
    expect(status).toBe(200);
    return body.data;
  }

  /** How many cards are still sealed for saving on the payment's 3DS session. */
  async function sealedCards(transactionId: string): Promise<number> {
    const [row] = await h.payments
      .get(DataSource)
      .query(
        `SELECT count(*)::int AS n FROM three_ds_sessions WHERE transaction_id = $1 AND sealed_card IS NOT NULL`,
        [transactionId],
      );
    return row.n;
  }

  /** Orders follows payments through events: waits until the merchant's GET shows `status`. */
  async function orderBecomes(orderId: string, status: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { body } = await h.getOrder(orderId);
      if (body.status === status) return;
      if (Date.now() > deadline) throw new Error(`Order ${orderId} is still ${body.status}, not ${status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('saves the card of a frictionless payment, and the merchant charges it without the shopper', async () => {
    const order = await orderSavingCards();
    const view = await payAndSave(order, FRICTIONLESS);
    expect(view).toMatchObject({
      status: 'Success',
      code: 'BYRD200',
      savedCard: {
        tokenId: expect.stringMatching(GUID),
        maskedCardNumber: '544828******0007',
        brand: 'MASTER',
      },
    });
    expect(await getPayment(order, view.transactionId)).toEqual(view);
    expect(await sealedCards(view.transactionId)).toBe(0);

    const tokenId = view.savedCard!.tokenId;
    expect(await tokensOf(order.customReference)).toEqual([
      expect.objectContaining({
        tokenId,
        customReference: order.customReference,
        alias: null,
        brand: 'MASTER',
        expiration: futureExpiry(),
        maskedCardNumber: '544828******0007',
      }),
    ]);
    await orderBecomes(order.orderId, 'paid');

    // A merchant-initiated payment: no shopper, no 3DS, no second verification of the card.
    const later = await h.payWithToken(tokenId, { amount: '12.00' });
    expect(later.status).toBe(201);
    expect(later.body).toMatchObject({
      status: 'Success',
      code: 'BYRD200',
      action: null,
      threeDSecure: null,
      transactionMode: 'merchantInitiatedUnescheduled',
    });
  });

  it('saves the card once the 3DS challenge succeeds, and not before', async () => {
    const order = await orderSavingCards();
    const view = await payAndSave(order, CHALLENGE);
    expect(view).toMatchObject({ code: 'BYRD207', status: 'Created', savedCard: null });
    expect(await tokensOf(order.customReference)).toEqual([]);

    const outcome = await authenticateWithSdk(h.paymentsUrl, view.threeDSecure!.id);
    expect(outcome.paymentStatus).toBe('Success');
    const done = await getPayment(order, view.transactionId);
    expect(done).toMatchObject({
      status: 'Success',
      savedCard: {
        tokenId: expect.stringMatching(GUID),
        maskedCardNumber: '555534******1115',
        brand: 'MASTER',
      },
    });
    const tokens = await tokensOf(order.customReference);
    expect(tokens.map((t) => t.tokenId)).toEqual([done.savedCard!.tokenId]);
    expect(await sealedCards(view.transactionId)).toBe(0);

    const later = await h.payWithToken(done.savedCard!.tokenId);
    expect(later.body).toMatchObject({ status: 'Success', threeDSecure: null });
  });

  it('saves nothing when the payment fails', async () => {
    const order = await orderSavingCards();
    const challenged = await payAndSave(order, CHALLENGE);
    const outcome = await authenticateWithSdk(h.paymentsUrl, challenged.threeDSecure!.id, '0000');
    expect(outcome.paymentStatus).toBe('Denied');
    expect(await getPayment(order, challenged.transactionId)).toMatchObject({
      status: 'Denied',
      savedCard: null,
    });
    const denied = await payAndSave(order, '4000000000000002');
    expect(denied).toMatchObject({ status: 'Denied', savedCard: null });
    expect(await tokensOf(order.customReference)).toEqual([]);
    // Neither card is kept sealed: there is nothing left to save.
    expect(await sealedCards(challenged.transactionId)).toBe(0);
    expect(await sealedCards(denied.transactionId)).toBe(0);
  });

  /** Pays with the vault away: the payment succeeds, its card is not saved yet. */
  async function payWhileVaultAway(order: { orderId: string; checkoutKey: string }) {
    await h.stopTokens();
    try {
      return await payAndSave(order, FRICTIONLESS);
    } finally {
      await h.restartTokens(keys);
    }
  }

  it('saves the card once the vault is back, when it was away as the payment succeeded', async () => {
    const order = await orderSavingCards();
    const view = await payWhileVaultAway(order);
    expect(view).toMatchObject({ status: 'Success', savedCard: null });
    expect(await sealedCards(view.transactionId)).toBe(1);

    // Two replicas' sweeps at once: the vault keeps one token, both record it.
    const sweep = h.payments.get(SaveCardsLeftBehind);
    const at = afterGrace();
    const saved = await Promise.all([sweep.execute(at), sweep.execute(at)]);
    expect(saved[0] + saved[1]).toBeGreaterThanOrEqual(1);
    const done = await getPayment(order, view.transactionId);
    expect(done.savedCard).toEqual({
      tokenId: expect.stringMatching(GUID),
      maskedCardNumber: '544828******0007',
      brand: 'MASTER',
    });
    expect((await tokensOf(order.customReference)).map((t) => t.tokenId)).toEqual([done.savedCard!.tokenId]);
    expect(await sealedCards(view.transactionId)).toBe(0);
    expect(await sweep.execute(afterGrace())).toBe(0);

    const later = await h.payWithToken(done.savedCard!.tokenId);
    expect(later.body).toMatchObject({ status: 'Success', threeDSecure: null });
  });

  it('does not bring back a card its merchant deleted after the payment when the save is finished late', async () => {
    const order = await orderSavingCards();
    // The vault stores the card, but payments never hears its answer.
    const rpc = h.payments.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      const answer = await call(subject, request);
      if (subject === RpcSubjects.TokensCreate) throw new Error('the answer was lost');
      return answer;
    }) as typeof rpc.call);
    let view: Awaited<ReturnType<typeof payAndSave>>;
    try {
      view = await payAndSave(order, FRICTIONLESS);
    } finally {
      spy.mockRestore();
    }
    expect(view).toMatchObject({ status: 'Success', savedCard: null });
    const [stored] = await tokensOf(order.customReference);
    // The shopper asks the merchant to forget the card.
    expect((await h.tokenRequest('DELETE', `/api/v2/tokens/${stored.tokenId}`)).status).toBe(204);

    expect(await h.payments.get(SaveCardsLeftBehind).execute(afterGrace())).toBe(0);
    expect(await tokensOf(order.customReference)).toEqual([]);
    expect(await sealedCards(view.transactionId)).toBe(0);

    // Paying again with "save my card" ticked after the delete saves it again.
    const again = await h.createOrder({
      paymentOptions: { tokenOptions: { customReference: order.customReference } },
    });
    const saved = await payAndSave(again.body as { orderId: string; checkoutKey: string }, FRICTIONLESS);
    expect(saved.savedCard).toMatchObject({ maskedCardNumber: '544828******0007' });
    expect((await tokensOf(order.customReference)).map((t) => t.tokenId)).toEqual([saved.savedCard!.tokenId]);
  });

  it('saves the card of a challenged payment once the vault is back, when it was away at the challenge', async () => {
    const order = await orderSavingCards();
    const challenged = await payAndSave(order, CHALLENGE);
    await h.stopTokens();
    let outcome: Awaited<ReturnType<typeof authenticateWithSdk>>;
    try {
      outcome = await authenticateWithSdk(h.paymentsUrl, challenged.threeDSecure!.id);
    } finally {
      await h.restartTokens(keys);
    }
    expect(outcome.paymentStatus).toBe('Success');
    expect((await getPayment(order, challenged.transactionId)).savedCard).toBeNull();

    expect(await h.payments.get(SaveCardsLeftBehind).execute(afterGrace())).toBe(1);
    const done = await getPayment(order, challenged.transactionId);
    expect(done.savedCard).toMatchObject({ maskedCardNumber: '555534******1115', brand: 'MASTER' });
    expect((await tokensOf(order.customReference)).map((t) => t.tokenId)).toEqual([done.savedCard!.tokenId]);
    expect(await sealedCards(challenged.transactionId)).toBe(0);
  });

  it('saves the card of a payment the recovery settled after its acquirer answer was lost', async () => {
    const order = await orderSavingCards();
    const view = await payAndSave(order, ANSWER_LOST);
    expect(view.status).not.toBe('Success');
    expect(view.savedCard).toBeNull();

    const recovery = h.payments.get(RecoverAcquirerCalls);
    const deadline = Date.now() + 20_000;
    while ((await getPayment(order, view.transactionId)).status !== 'Success') {
      if (Date.now() > deadline) throw new Error('The recovery did not settle the payment');
      await new Promise((r) => setTimeout(r, 250));
      await recovery.execute();
    }
    expect(await tokensOf(order.customReference)).toEqual([]);

    expect(await h.payments.get(SaveCardsLeftBehind).execute(afterGrace())).toBe(1);
    const done = await getPayment(order, view.transactionId);
    expect(done.savedCard).toMatchObject({ tokenId: expect.stringMatching(GUID), brand: 'MASTER' });
    expect((await tokensOf(order.customReference)).map((t) => t.tokenId)).toEqual([done.savedCard!.tokenId]);
    expect(await sealedCards(view.transactionId)).toBe(0);
    await orderBecomes(order.orderId, 'paid');
  });

  it('gives a card up, wiped, when it could not be saved within the hour', async () => {
    const order = await orderSavingCards();
    const view = await payWhileVaultAway(order);
    expect(view).toMatchObject({ status: 'Success', savedCard: null });

    const anHourLater = new Date(Date.now() + 61 * 60_000);
    expect(await h.payments.get(SaveCardsLeftBehind).execute(anHourLater)).toBe(0);
    expect(await sealedCards(view.transactionId)).toBe(0);
    expect(await tokensOf(order.customReference)).toEqual([]);
    expect((await getPayment(order, view.transactionId)).savedCard).toBeNull();
  });
});
