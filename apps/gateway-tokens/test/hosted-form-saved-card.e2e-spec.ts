import { randomUUID } from 'node:crypto';
import type { Rpc } from '@byrd/platform';
import { authenticateWithSdk, futureExpiry } from '@byrd/platform/testing';
import { TokensHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FRICTIONLESS = '5448280000000007';
const CHALLENGE = '5555341244441115';
const card = (number: string) => ({ number, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' });

/**
 * "Save my card" in the hosted form: the shopper pays an order that offers it
 * (`paymentOptions.tokenOptions.customReference`), payments stores the card in the vault once the
 * payment succeeded, and the merchant charges that token later without the shopper.
 */
describe('hosted form: save my card', () => {
  let h: TokensHarness;
  let bff: Rpc;

  beforeAll(async () => {
    h = await TokensHarness.start(undefined, { withOrders: true });
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
  });
});
