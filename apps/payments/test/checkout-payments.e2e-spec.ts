import type { CheckoutPaymentRpcRequest } from '@byrd/contracts';
import { ApiError, type Rpc } from '@byrd/platform';
import { authenticateWithSdk, futureExpiry } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FRICTIONLESS = '4242424242424242';
const CHALLENGE = '4000000000003220';
const DENIED = '4000000000000002';
const card = (number: string) => ({ number, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' });

/**
 * The hosted form's backend pays orders over NATS (`rpc.payments.create`, signed by
 * hosted-form-bff) and follows the payments (`rpc.payments.get`), authorised by the checkout key.
 */
describe('hosted-form payments (rpc.payments.create / rpc.payments.get)', () => {
  let h: PaymentsHarness;
  let bff: Rpc;

  beforeAll(async () => {
    h = await PaymentsHarness.start({}, { publicBaseIsSelf: true });
    bff = h.rpcAs('hosted-form-bff');
  });
  afterAll(() => h?.stop());

  async function newOrder(overrides: Record<string, unknown> = {}) {
    const { status, body } = await h.createOrder(overrides);
    expect(status).toBe(201);
    return body as { orderId: string; checkoutKey: string; orderRef: string };
  }

  function pay(
    order: { orderId: string; checkoutKey: string },
    payment: CheckoutPaymentRpcRequest['payment'],
    saveCard = false,
  ) {
    return bff.call('rpc.payments.create', {
      orderId: order.orderId,
      checkoutKey: order.checkoutKey,
      payment,
      saveCard,
    });
  }

  const getPayment = (order: { orderId: string; checkoutKey: string }, transactionId: string) =>
    bff.call('rpc.payments.get', { orderId: order.orderId, checkoutKey: order.checkoutKey, transactionId });

  /** The ApiError a call is refused with (as the hosted form's backend receives it). */
  async function refusal(call: Promise<unknown>): Promise<ApiError> {
    const error = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it("pays an order with a frictionless card for the order's amount, and the order is paid", async () => {
    const order = await newOrder({ amount: '42.50' });
    const view = await pay(order, { type: 'card', card: card(FRICTIONLESS) });
    expect(view).toEqual({
      transactionId: expect.stringMatching(GUID),
      type: 'card',
      status: 'Success',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      amount: '42.50',
      currency: 'EUR',
      brand: 'VISA',
      threeDSecure: null,
      refusedByOrder: false,
      multibanco: null,
      mbway: null,
      savedCard: null,
    });
    const paid = await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(paid.lastTransactionId).toBe(view.transactionId);
    const transaction = await h.request('GET', `/api/v2/transactions/${view.transactionId}`);
    expect(transaction.body).toMatchObject({
      orderId: order.orderId,
      orderRef: order.orderRef,
      initiatedFrom: 'HostedForm',
      maskedCardNumber: '424242******4242',
      transactionMode: 'None',
    });
    expect(await getPayment(order, view.transactionId)).toEqual(view);
  });

  it('answers BYRD207 with the 3DS SDK handles for a challenge card, then Success once answered', async () => {
    const order = await newOrder();
    const view = await pay(order, { type: 'card', card: card(CHALLENGE) });
    expect(view).toMatchObject({
      status: 'Created',
      code: 'BYRD207',
      description: 'Pending redirect',
      threeDSecure: {
        id: expect.stringMatching(GUID),
        status: 'Created',
        requestId: expect.stringMatching(GUID),
      },
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const outcome = await authenticateWithSdk(h.paymentsUrl, view.threeDSecure!.id);
    expect(outcome).toMatchObject({ transactionId: view.transactionId, paymentStatus: 'Success' });
    expect(await getPayment(order, view.transactionId)).toMatchObject({
      status: 'Success',
      code: 'BYRD200',
      threeDSecure: null,
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it('reports a denied card as a Denied payment, and the order can be paid again', async () => {
    const order = await newOrder();
    const denied = await pay(order, { type: 'card', card: card(DENIED) });
    expect(denied).toMatchObject({ status: 'Denied', code: 'BYRD205', refusedByOrder: false });
    const retry = await pay(order, { type: 'card', card: card(FRICTIONLESS) });
    expect(retry).toMatchObject({ status: 'Success' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    // Once paid, the order takes no other payment.
    const again = await refusal(pay(order, { type: 'card', card: card(FRICTIONLESS) }));
    expect(again.code).toBe('BYRD205');
  });

  it('tells a payment its order refused (another attempt held it) from a decline: refusedByOrder, BYRD205 for the merchant as before', async () => {
    const order = await newOrder();
    const first = await pay(order, { type: 'card', card: card(CHALLENGE) });
    const second = await pay(order, { type: 'card', card: card(CHALLENGE) });
    expect(await authenticateWithSdk(h.paymentsUrl, first.threeDSecure!.id)).toMatchObject({
      paymentStatus: 'Success',
    });
    // The second shopper authenticates too, but the order is the first payment's: no acquirer call.
    expect(await authenticateWithSdk(h.paymentsUrl, second.threeDSecure!.id)).toMatchObject({
      paymentStatus: 'Denied',
    });
    expect(await getPayment(order, second.transactionId)).toMatchObject({
      status: 'Denied',
      code: 'BYRD205',
      refusedByOrder: true,
    });
    expect(await getPayment(order, first.transactionId)).toMatchObject({
      status: 'Success',
      refusedByOrder: false,
    });
    // The merchant's API is unchanged: a Denied BYRD205 payment, no new field.
    const asMerchant = (await h.request('GET', `/api/v2/transactions/${second.transactionId}`)).body;
    expect(asMerchant).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    expect(asMerchant).not.toHaveProperty('refusedByOrder');

    // A challenge the shopper fails is the bank's refusal, not the order's.
    const other = await newOrder();
    const failed = await pay(other, { type: 'card', card: card(CHALLENGE) });
    await authenticateWithSdk(h.paymentsUrl, failed.threeDSecure!.id, '0000');
    expect(await getPayment(other, failed.transactionId)).toMatchObject({
      status: 'Denied',
      refusedByOrder: false,
    });
  });

  it('two shoppers authenticating at once, round after round: one pays, the other is refused by the order and marked so', async () => {
    for (let round = 0; round < 6; round++) {
      const order = await newOrder();
      const [a, b] = await Promise.all([
        pay(order, { type: 'card', card: card(CHALLENGE) }),
        pay(order, { type: 'card', card: card(CHALLENGE) }),
      ]);
      await Promise.all([a, b].map((p) => authenticateWithSdk(h.paymentsUrl, p.threeDSecure!.id)));
      const views = await Promise.all([a, b].map((p) => getPayment(order, p.transactionId)));
      const byStatus = Object.fromEntries(views.map((v) => [v.status, v]));
      expect(Object.keys(byStatus).sort()).toEqual(['Denied', 'Success']);
      expect(byStatus.Success.refusedByOrder).toBe(false);
      expect(byStatus.Denied).toMatchObject({ code: 'BYRD205', refusedByOrder: true });
      await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    }
  });

  it('gives a multibanco entity and reference for the order, paid later', async () => {
    const order = await newOrder();
    const view = await pay(order, { type: 'multibanco' });
    expect(view).toMatchObject({
      type: 'multibanco',
      status: 'Processing',
      code: 'BYRD201',
      amount: '25.00',
      brand: null,
      threeDSecure: null,
      mbway: null,
      multibanco: {
        entity: expect.stringMatching(/^\d{5}$/),
        reference: expect.stringMatching(/^\d{9}$/),
        amount: '25.00',
        expiresAt: expect.any(String),
      },
    });
    expect((await h.simulate(view.transactionId, 'pay')).status).toBe(200);
    expect(await getPayment(order, view.transactionId)).toMatchObject({ status: 'Success', code: 'BYRD200' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it('sends an MB WAY request to the shopper phone, and the page sees it accepted', async () => {
    const order = await newOrder();
    const view = await pay(order, { type: 'mbway', mbway: { phoneNumber: '912 345 678' } });
    expect(view).toMatchObject({
      type: 'mbway',
      status: 'Processing',
      code: 'BYRD201',
      mbway: { phoneNumber: '+351912345678' },
      multibanco: null,
    });
    expect(await getPayment(order, view.transactionId)).toMatchObject({ status: 'Processing' });
    await h.simulate(view.transactionId, 'pay');
    expect(await getPayment(order, view.transactionId)).toMatchObject({ status: 'Success' });
  });

  it('refuses a wrong checkout key like an unknown order, and charges nothing', async () => {
    const order = await newOrder();
    const other = await newOrder();
    const error = await refusal(
      pay(
        { orderId: order.orderId, checkoutKey: other.checkoutKey },
        { type: 'card', card: card(FRICTIONLESS) },
      ),
    );
    expect(error.code).toBe('BYRD901');
    const unknown = await refusal(
      pay({ orderId: other.checkoutKey, checkoutKey: other.checkoutKey }, { type: 'multibanco' }),
    );
    expect(unknown.code).toBe('BYRD901');
    const listed = await h.request('GET', `/api/v2/transactions?orderId=${order.orderId}`);
    expect(listed.body.data).toEqual([]);
  });

  it('takes card data only from the hosted form backend', async () => {
    const order = await newOrder();
    for (const service of ['orders', 'gateway-tokens']) {
      const error = await refusal(
        h.rpcAs(service).call('rpc.payments.create', {
          orderId: order.orderId,
          checkoutKey: order.checkoutKey,
          payment: { type: 'card', card: card(FRICTIONLESS) },
          saveCard: false,
        }),
      );
      // Refused for the caller's own identity: a 500 to that caller, payments' reason in its cause.
      expect({ kind: error.kind, message: error.message, cause: String(error.cause) }).toEqual({
        kind: 'Internal',
        message: 'rpc.payments.create could not be called',
        cause: `Error: rpc.payments.create refused this service: ${service} may not call rpc.payments.create`,
      });
    }
    // Unsigned, as any program on the NATS server could send it.
    const reply = await h.env.nats.nc.request(
      h.env.nats.subject('rpc.payments.create'),
      JSON.stringify({ orderId: order.orderId, checkoutKey: order.checkoutKey }),
      { timeout: 5_000 },
    );
    expect(reply.json<any>().error.code).toBe('BYRD403');
    const listed = await h.request('GET', `/api/v2/transactions?orderId=${order.orderId}`);
    expect(listed.body.data).toEqual([]);
  });

  it('names each invalid field, as the form shows them', async () => {
    const order = await newOrder();
    const luhn = await refusal(pay(order, { type: 'card', card: card('4242424242424241') }));
    expect(luhn.code).toBe('BYRD900');
    expect(luhn.errors).toEqual([{ field: 'card.number', message: expect.stringContaining('Luhn') }]);
    const error = await refusal(
      pay(order, { type: 'card', card: { ...card(FRICTIONLESS), expiration: '13/30', cvv: '1' } }),
    );
    expect(error.code).toBe('BYRD900');
    expect(error.errors?.map((e) => e.field).sort()).toEqual(['card.cvv', 'card.expiration']);

    const noPhone = await refusal(pay(order, { type: 'mbway' }));
    expect(noPhone.errors).toEqual([{ field: 'mbway.phoneNumber', message: expect.any(String) }]);
    const noCard = await refusal(pay(order, { type: 'card' }));
    expect(noCard.errors).toEqual([{ field: 'card', message: expect.any(String) }]);
  });

  it('refuses a method the order does not allow with BYRD292', async () => {
    const order = await newOrder({ paymentOptions: { allowedPaymentMethods: ['multibanco'] } });
    const error = await refusal(pay(order, { type: 'card', card: card(FRICTIONLESS) }));
    expect(error.code).toBe('BYRD292');
  });

  it("shows a payment only with its own order's checkout key", async () => {
    const order = await newOrder();
    const other = await newOrder();
    const view = await pay(order, { type: 'multibanco' });
    const lookups = [
      // Another order's key and id: the payment is not one of that order's.
      { orderId: other.orderId, checkoutKey: other.checkoutKey, transactionId: view.transactionId },
      // The right order with another order's key.
      { orderId: order.orderId, checkoutKey: other.checkoutKey, transactionId: view.transactionId },
      // Not a payment at all.
      { orderId: order.orderId, checkoutKey: order.checkoutKey, transactionId: order.checkoutKey },
    ];
    const errors = await Promise.all(lookups.map((l) => refusal(bff.call('rpc.payments.get', l))));
    for (const [i, error] of errors.entries()) {
      expect(error.code).toBe('BYRD901');
      expect(error.message).toBe(
        `Payment ${lookups[i].transactionId} of order ${lookups[i].orderId} was not found`,
      );
    }
  });

  it('refuses to save a card when the order offers no saving, or the payment is not a card', async () => {
    const order = await newOrder();
    const error = await refusal(pay(order, { type: 'card', card: card(FRICTIONLESS) }, true));
    expect(error.code).toBe('BYRD900');
    expect(error.errors).toEqual([{ field: 'saveCard', message: expect.stringContaining('tokenOptions') }]);

    const offering = await newOrder({ paymentOptions: { tokenOptions: { customReference: 'shopper-1' } } });
    const notCard = await refusal(pay(offering, { type: 'multibanco' }, true));
    expect(notCard.errors).toEqual([{ field: 'saveCard', message: expect.stringContaining('only a card') }]);
    const listed = await h.request('GET', `/api/v2/transactions?orderId=${order.orderId}`);
    expect(listed.body.data).toEqual([]);
  });

  it('keeps a successful payment when the vault cannot save its card', async () => {
    // No vault runs in this suite: rpc.tokens.create has no responder.
    const order = await newOrder({ paymentOptions: { tokenOptions: { customReference: 'shopper-2' } } });
    const view = await pay(order, { type: 'card', card: card(FRICTIONLESS) }, true);
    expect(view).toMatchObject({ status: 'Success', code: 'BYRD200', savedCard: null });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    const transaction = await h.request('GET', `/api/v2/transactions/${view.transactionId}`);
    expect(transaction.body).toMatchObject({ status: 'Success', transactionMode: 'initialUnescheduled' });
  });
});
