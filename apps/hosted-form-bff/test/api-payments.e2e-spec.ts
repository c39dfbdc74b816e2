import { randomUUID } from 'node:crypto';
import { authenticateWithSdk, cardDataLeaks, futureExpiry } from '@byrd/platform/testing';
import { CheckoutHarness, standInWebDir, type HttpAnswer } from './harness.js';

const FRICTIONLESS = '5448280000000007';
const CHALLENGE = '5555341244441115';
const DENIED = '4000000000000002';
const CVV = '737';
const CARDS = [FRICTIONLESS, CHALLENGE, DENIED];

/**
 * Paying an order through the BFF as the page does: cards (frictionless, 3DS challenge, denied),
 * Multibanco and MB WAY, save card, and what the merchant's GET order shows afterwards.
 */
describe('hosted form API: payments', () => {
  let h: CheckoutHarness;
  /** Every BFF answer of the suite, scanned for card data at the end. */
  const answers: HttpAnswer[] = [];

  beforeAll(async () => {
    h = await CheckoutHarness.start({ webDir: standInWebDir() });
  });
  afterAll(async () => {
    await h?.stop();
  });

  type Order = { orderId: string; checkoutKey: string };
  const record = async (answer: Promise<HttpAnswer>) => {
    const done = await answer;
    answers.push(done);
    return done;
  };
  const pay = (order: Order, body: Record<string, unknown>) =>
    record(h.api('POST', `/checkout/api/v2/orders/${order.orderId}/payments`, body, order.checkoutKey));
  const payByCard = (order: Order, number: string, extra: Record<string, unknown> = {}) =>
    pay(order, {
      type: 'card',
      card: { number, expiration: futureExpiry(), cvv: CVV, holder: 'Ana Silva' },
      ...extra,
    });
  const getPayment = (order: Order, transactionId: string) =>
    record(
      h.api(
        'GET',
        `/checkout/api/v2/orders/${order.orderId}/payments/${transactionId}`,
        undefined,
        order.checkoutKey,
      ),
    );
  const cancel = (order: Order) =>
    record(h.api('POST', `/checkout/api/v2/orders/${order.orderId}/cancel`, undefined, order.checkoutKey));

  it('pays by card without a challenge: Success, and the merchant sees the order paid', async () => {
    const order = await h.createOrder();
    const paid = await payByCard(order, FRICTIONLESS);
    expect(paid.status).toBe(201);
    expect(paid.headers.get('cache-control')).toBe('no-store');
    expect(paid.body).toEqual({
      transactionId: expect.any(String),
      type: 'card',
      status: 'Success',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      amount: '25.00',
      currency: 'EUR',
      brand: 'MASTER',
      threeDSecure: null,
      refusedByOrder: false,
      multibanco: null,
      mbway: null,
      savedCard: null,
    });
    const merchantView = await h.waitForOrderStatus(order.orderId, 'paid');
    expect(merchantView.transactions).toEqual([
      expect.objectContaining({ transactionId: paid.body.transactionId, status: 'Success' }),
    ]);
    expect((await getPayment(order, paid.body.transactionId)).body).toEqual(paid.body);
  });

  it('answers BYRD207 with threeDSecure for a challenge card; after the OTP the payment and the order are done', async () => {
    const order = await h.createOrder();
    const started = await payByCard(order, CHALLENGE);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      status: 'Created',
      code: 'BYRD207',
      threeDSecure: { id: expect.any(String), status: 'Created', requestId: expect.any(String) },
    });
    // What the page does with the SDK it loads from threeDSecureSdkUrl.
    const outcome = await authenticateWithSdk(h.paymentsUrl, started.body.threeDSecure.id);
    expect(outcome).toMatchObject({ status: 'Authorized', paymentStatus: 'Success' });
    const after = await getPayment(order, started.body.transactionId);
    expect(after.body).toMatchObject({ status: 'Success', code: 'BYRD200', threeDSecure: null });
    await h.waitForOrderStatus(order.orderId, 'paid');
  });

  it('lets the shopper retry after a denied card', async () => {
    const order = await h.createOrder();
    const denied = await payByCard(order, DENIED);
    expect(denied.status).toBe(201);
    expect(denied.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    const view = await record(
      h.api('GET', `/checkout/api/v2/orders/${order.orderId}`, undefined, order.checkoutKey),
    );
    expect(view.body.status).toBe('created');
    expect((await payByCard(order, FRICTIONLESS)).body.status).toBe('Success');
    await h.waitForOrderStatus(order.orderId, 'paid');
  });

  it('gives a Multibanco entity and reference; paying it makes the order paid', async () => {
    const order = await h.createOrder({ amount: '31.40' });
    const answer = await pay(order, { type: 'multibanco' });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      type: 'multibanco',
      status: 'Processing',
      code: 'BYRD201',
      multibanco: {
        entity: expect.stringMatching(/^\d{5}$/),
        reference: expect.stringMatching(/^\d{9}$/),
        amount: '31.40',
        expiresAt: expect.any(String),
      },
    });
    await h.waitForOrderStatus(order.orderId, 'pending');
    expect((await h.simulateAsyncPayment(answer.body.transactionId, 'pay')).status).toBe(200);
    expect((await getPayment(order, answer.body.transactionId)).body).toMatchObject({ status: 'Success' });
    await h.waitForOrderStatus(order.orderId, 'paid');
  });

  it('sends an MB WAY request the waiting page follows until the shopper accepts it', async () => {
    const order = await h.createOrder();
    const answer = await pay(order, { type: 'mbway', mbway: { phoneNumber: '912 345 678' } });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      type: 'mbway',
      status: 'Processing',
      code: 'BYRD201',
      mbway: { phoneNumber: '+351912345678' },
    });
    expect((await getPayment(order, answer.body.transactionId)).body.status).toBe('Processing');
    expect((await h.simulateAsyncPayment(answer.body.transactionId, 'pay')).status).toBe(200);
    expect((await getPayment(order, answer.body.transactionId)).body).toMatchObject({ status: 'Success' });
    await h.waitForOrderStatus(order.orderId, 'paid');
  });

  describe("the page's idempotency-key: one payment per attempt", () => {
    const ROUNDS = 8;
    const MBWAY = { type: 'mbway', mbway: { phoneNumber: '912 345 678' } };
    const MULTIBANCO = { type: 'multibanco' };
    const payKeyed = (order: Order, body: Record<string, unknown>, key: string) =>
      record(
        h.api('POST', `/checkout/api/v2/orders/${order.orderId}/payments`, body, order.checkoutKey, {
          'idempotency-key': key,
        }),
      );

    it('the same MB WAY or Multibanco attempt sent twice at once makes one payment (one push, one reference), both answered with it', async () => {
      for (const body of [MBWAY, MULTIBANCO]) {
        for (let round = 0; round < ROUNDS; round++) {
          const order = await h.createOrder();
          const key = randomUUID();
          const [first, second] = await Promise.all([
            payKeyed(order, body, key),
            payKeyed(order, body, key),
          ]);
          expect([first.status, second.status]).toEqual([201, 201]);
          expect(second.body).toEqual(first.body);
          expect(first.body).toMatchObject({ type: body.type, status: 'Processing', code: 'BYRD201' });
          const made = await h.transactionsOf(order.orderId);
          expect(made.map((t) => t.transactionId)).toEqual([first.body.transactionId]);
        }
      }
    });

    it('sent again after its answer was lost: the same payment as it stands; another key is another attempt', async () => {
      for (const body of [MBWAY, MULTIBANCO]) {
        const order = await h.createOrder();
        const key = randomUUID();
        const first = await payKeyed(order, body, key);
        const again = await payKeyed(order, body, key);
        expect(again.status).toBe(201);
        expect(again.body).toEqual(first.body);
        const other = await payKeyed(order, body, randomUUID());
        expect(other.status).toBe(201);
        expect(other.body.transactionId).not.toBe(first.body.transactionId);
        expect(await h.transactionsOf(order.orderId)).toHaveLength(2);
        // Once settled, the retry answers it so (the page shows the order paid, not a new request).
        expect((await h.simulateAsyncPayment(first.body.transactionId, 'pay')).status).toBe(200);
        expect((await payKeyed(order, body, key)).body).toMatchObject({
          transactionId: first.body.transactionId,
          status: 'Success',
        });
      }
    });

    it('an MB WAY refused in the app is over: its key sent again asks the phone anew', async () => {
      const order = await h.createOrder();
      const key = randomUUID();
      const first = await payKeyed(order, MBWAY, key);
      expect((await h.simulateAsyncPayment(first.body.transactionId, 'refuse')).status).toBe(200);
      const again = await payKeyed(order, MBWAY, key);
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ status: 'Processing' });
      expect(again.body.transactionId).not.toBe(first.body.transactionId);
    });

    it('refuses a malformed key (on the header) and the key of another phone number, 400 each, paying nothing', async () => {
      const order = await h.createOrder();
      for (const bad of ['x'.repeat(256)]) {
        const refused = await payKeyed(order, MBWAY, bad);
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({
          code: 'BYRD900',
          errors: [{ field: 'idempotency-key', message: 'must be 1 to 255 characters' }],
        });
      }
      expect(await h.transactionsOf(order.orderId)).toEqual([]);
      const key = randomUUID();
      const first = await payKeyed(order, MBWAY, key);
      const otherPhone = await payKeyed(order, { type: 'mbway', mbway: { phoneNumber: '961 234 567' } }, key);
      expect(otherPhone.status).toBe(400);
      expect(otherPhone.body).toMatchObject({
        code: 'BYRD900',
        message: expect.stringContaining('already used for payment'),
      });
      expect((await h.transactionsOf(order.orderId)).map((t) => t.transactionId)).toEqual([
        first.body.transactionId,
      ]);
    });
  });

  it('refuses to pay or cancel a paid order, with sentences saying why', async () => {
    const order = await h.createOrder();
    expect((await payByCard(order, FRICTIONLESS)).body.status).toBe('Success');
    await h.waitForOrderStatus(order.orderId, 'paid');

    const again = await payByCard(order, FRICTIONLESS);
    expect(again.status).toBe(422);
    // Payments decides (and words) it: the form's backend passes the refusal through.
    expect(again.body).toMatchObject({
      code: 'BYRD205',
      message: expect.stringContaining('is paid and cannot be paid'),
    });
    const canceled = await cancel(order);
    expect(canceled.status).toBe(422);
    expect(canceled.body).toMatchObject({
      code: 'BYRD205',
      message: 'This order is paid and cannot be canceled',
    });
    expect((await h.getOrder(order.orderId)).status).toBe('paid');
  });

  it("refuses a method the order does not offer, a missing card or phone, and another order's payment", async () => {
    const order = await h.createOrder({ paymentOptions: { allowedPaymentMethods: ['card'] } });
    const notOffered = await pay(order, { type: 'multibanco' });
    expect(notOffered.status).toBe(400);
    expect(notOffered.body).toMatchObject({
      code: 'BYRD900',
      errors: [{ field: 'type', message: expect.any(String) }],
    });
    const unknownType = await pay(order, { type: 'paypal' });
    expect(unknownType.status).toBe(400);
    expect((await pay(order, { type: 'card' })).body.errors).toEqual([
      { field: 'card', message: 'is required for a card payment' },
    ]);
    const open = await h.createOrder();
    expect((await pay(open, { type: 'mbway' })).body.errors).toEqual([
      { field: 'mbway.phoneNumber', message: expect.any(String) },
    ]);

    // A payment is shown only with its own order's key.
    const paid = await payByCard(open, FRICTIONLESS);
    const foreign = await getPayment(order, paid.body.transactionId);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'BYRD901' });
    expect((await getPayment(open, randomUUID())).status).toBe(404);
    expect((await getPayment({ ...open, checkoutKey: randomUUID() }, paid.body.transactionId)).status).toBe(
      404,
    );
    expect((await pay({ ...order, checkoutKey: randomUUID() }, { type: 'multibanco' })).status).toBe(404);
  });

  it('saves the card only when the order offers it, and answers the masked saved card', async () => {
    const plain = await h.createOrder();
    const refused = await payByCard(plain, FRICTIONLESS, { saveCard: true });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      { field: 'saveCard', message: 'this order does not offer to save the card' },
    ]);
    const offering = await h.createOrder({
      paymentOptions: { tokenOptions: { customReference: 'customer-7' } },
    });
    const multibanco = await pay(offering, { type: 'multibanco', saveCard: true });
    expect(multibanco.status).toBe(400);
    expect(multibanco.body.errors).toEqual([{ field: 'saveCard', message: 'applies to card payments only' }]);

    const saved = await payByCard(offering, FRICTIONLESS, { saveCard: true });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({
      status: 'Success',
      savedCard: { tokenId: expect.any(String), maskedCardNumber: '544828******0007', brand: 'MASTER' },
    });
    const token = await h.merchantCall(h.tokensUrl, 'GET', `/api/v2/tokens/${saved.body.savedCard.tokenId}`);
    expect(token.body).toMatchObject({ customReference: 'customer-7', maskedCardNumber: '544828******0007' });
  });

  it('never answers nor logs a card number or a CVV', async () => {
    expect(answers.length).toBeGreaterThan(20);
    const leaks = cardDataLeaks(
      { answers: JSON.stringify(answers.map((a) => a.body)), logs: h.logs() },
      CARDS,
      [CVV],
    );
    expect(leaks).toEqual([]);
    // The logs really cover the payments: their requests were logged.
    expect(h.logs()).toContain('/checkout/api/v2/orders/');
  });
});
