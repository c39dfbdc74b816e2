import { randomUUID } from 'node:crypto';
import { futureExpiry } from '@byrd/platform/testing';
import { CheckoutHarness, standInWebDir } from './harness.js';

/** The order the page renders and the cancel button, through the BFF as the browser calls it. */
describe('hosted form API: orders', () => {
  let h: CheckoutHarness;
  beforeAll(async () => {
    h = await CheckoutHarness.start({ webDir: standInWebDir() });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const view = (orderId: string, checkoutKey?: string) =>
    h.api('GET', `/checkout/api/v2/orders/${orderId}`, undefined, checkoutKey);

  it('shows the order with the merchant, the amount, the 3DS SDK and every method the form takes', async () => {
    const order = await h.createOrder({ amount: '42.50' });
    expect(order.checkoutUrl).toContain(h.checkoutUrl.replace(/\/$/, ''));
    const { status, body, headers } = await view(order.orderId, order.checkoutKey);
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(body).toEqual({
      orderId: order.orderId,
      status: 'created',
      allowedOrigins: ['https://shop.example.com'],
      amount: '42.50',
      isoAmount: 4250,
      currency: 'EUR',
      orderRef: order.orderRef,
      merchantName: 'Acme Shop',
      merchantMode: 'sandbox',
      expiresAt: order.expiresAt,
      redirectUrl: 'https://shop.example.com/return',
      paymentMethods: ['card', 'multibanco', 'mbway'],
      saveCardOffered: false,
      isPreAuth: false,
      paymentLocked: false,
      authorized: false,
      threeDSecureSdkUrl: `${h.paymentsUrl}/3ds/sdk.js`,
    });
    expect(JSON.stringify(body)).not.toContain(order.checkoutKey);
    expect(JSON.stringify(body)).not.toContain(h.merchant.merchantId);
  });

  it("offers only the merchant's allowed methods the form takes, in the form's order, and save card with tokenOptions", async () => {
    const order = await h.createOrder({
      paymentOptions: {
        allowedPaymentMethods: ['mbway', 'paypal', 'card'],
        tokenOptions: { customReference: 'customer-42' },
        cardOptions: { isPreAuth: true },
      },
    });
    const { body } = await view(order.orderId, order.checkoutKey);
    // MB WAY is allowed but would settle the pre-authorisation in full: card alone.
    expect(body.paymentMethods).toEqual(['card']);
    expect(body.saveCardOffered).toBe(true);
    expect(body.isPreAuth).toBe(true);
    const asPayment = await h.createOrder({
      paymentOptions: { allowedPaymentMethods: ['mbway', 'paypal', 'card'] },
    });
    expect((await view(asPayment.orderId, asPayment.checkoutKey)).body.paymentMethods).toEqual([
      'card',
      'mbway',
    ]);

    const multibancoOnly = await h.createOrder({ paymentOptions: { allowedPaymentMethods: ['multibanco'] } });
    expect((await view(multibancoOnly.orderId, multibancoOnly.checkoutKey)).body.paymentMethods).toEqual([
      'multibanco',
    ]);
  });

  it('offers a USD order only card (payments takes Multibanco and MB WAY in EUR only) and refuses MB WAY for it', async () => {
    const order = await h.createOrder({ currency: 'USD' });
    expect((await view(order.orderId, order.checkoutKey)).body.paymentMethods).toEqual(['card']);
    const mbway = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      { type: 'mbway', mbway: { phoneNumber: '912345678' } },
      order.checkoutKey,
    );
    expect(mbway.status).toBe(400);
    expect(mbway.body.errors).toEqual([{ field: 'type', message: expect.stringContaining('card') }]);

    const asyncOnly = await h.createOrder({
      currency: 'USD',
      paymentOptions: { allowedPaymentMethods: ['multibanco', 'mbway'] },
    });
    expect((await view(asyncOnly.orderId, asyncOnly.checkoutKey)).body).toMatchObject({
      status: 'created',
      paymentMethods: [],
    });
  });

  it('offers an order asking for a pre-authorisation only card (Multibanco and MB WAY settle in full) and refuses them for it, paying nothing', async () => {
    const order = await h.createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } });
    expect((await view(order.orderId, order.checkoutKey)).body).toMatchObject({
      isPreAuth: true,
      paymentMethods: ['card'],
    });
    for (const body of [{ type: 'multibanco' }, { type: 'mbway', mbway: { phoneNumber: '912345678' } }]) {
      const refused = await h.api(
        'POST',
        `/checkout/api/v2/orders/${order.orderId}/payments`,
        body,
        order.checkoutKey,
      );
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'BYRD900' });
      expect(refused.body.errors).toEqual([{ field: 'type', message: expect.stringContaining('card') }]);
    }
    expect(await h.getOrder(order.orderId)).toMatchObject({ status: 'created', transactions: [] });

    const asyncOnly = await h.createOrder({
      paymentOptions: { cardOptions: { isPreAuth: true }, allowedPaymentMethods: ['multibanco', 'mbway'] },
    });
    expect((await view(asyncOnly.orderId, asyncOnly.checkoutKey)).body).toMatchObject({
      status: 'created',
      paymentMethods: [],
    });
  });

  it('says a pre-authorised order is authorised (held, pending) until the merchant releases it', async () => {
    const order = await h.createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } });
    const paid = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      {
        type: 'card',
        card: { number: '4242424242424242', expiration: futureExpiry(), cvv: '123', holder: 'Ana' },
      },
      order.checkoutKey,
    );
    expect(paid.body).toMatchObject({ status: 'Success' });
    const until = async (done: (body: Record<string, any>) => boolean) => {
      for (const deadline = Date.now() + 15_000; ;) {
        const { body } = await view(order.orderId, order.checkoutKey);
        if (done(body) || Date.now() > deadline) return body;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    expect(await until((body) => body.authorized)).toMatchObject({
      status: 'pending',
      paymentLocked: true,
      authorized: true,
    });

    const released = await h.merchantCall(
      h.paymentsUrl,
      'POST',
      `/api/v2/release/${paid.body.transactionId}`,
      {},
    );
    expect(released.body.status).toBe('Success');
    // Payments unlocks the order over RPC at once; its status follows with the release's event.
    expect(await until((body) => !body.paymentLocked && body.status !== 'pending')).toMatchObject({
      status: 'created',
      paymentLocked: false,
      authorized: false,
    });
  });

  it("answers a wrong key, a wrong order or another order's key with the same 404, and a missing key with 401", async () => {
    const order = await h.createOrder();
    const other = await h.createOrder();
    const answers = await Promise.all([
      view(order.orderId, randomUUID()),
      view(randomUUID(), order.checkoutKey),
      view(order.orderId, other.checkoutKey),
      view(order.orderId, 'not-a-key'),
      view('not-an-order', order.checkoutKey),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({
        code: 'BYRD901',
        description: 'Resource not found',
        message: 'No order matches this order id and checkout key',
      });
      expect(answer.body.requestId).toEqual(expect.any(String));
    }

    const missing = await view(order.orderId);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({
      code: 'BYRD401',
      message: expect.stringContaining('x-checkout-key'),
    });
  });

  it('cancels an open order (order.canceled); cancels again as orders answers it; refuses to pay it', async () => {
    const order = await h.createOrder();
    const events = await h.env.collect('order.canceled');
    const cancel = (o: { orderId: string; checkoutKey: string }) =>
      h.api('POST', `/checkout/api/v2/orders/${o.orderId}/cancel`, undefined, o.checkoutKey);
    const canceledEventsOf = (orderId: string) =>
      events.events.filter((e) => (e.envelope.data as { orderId?: string }).orderId === orderId);

    const first = await cancel(order);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ orderId: order.orderId, status: 'canceled' });
    expect((await h.getOrder(order.orderId)).status).toBe('canceled');
    const event = await events.waitFor((e) => (e.data as { orderId?: string }).orderId === order.orderId);
    expect(event.envelope.type).toBe('order.canceled');
    expect((await view(order.orderId, order.checkoutKey)).body.status).toBe('canceled');

    // Orders answers a repeated cancel as done (the shopper pressed twice, or retried): so does the
    // form's backend, instead of refusing what orders accepts.
    const again = await cancel(order);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ orderId: order.orderId, status: 'canceled' });
    // ...and nothing is announced again: another order's cancel arrives, the first still has one event.
    const other = await h.createOrder();
    expect((await cancel(other)).status).toBe(200);
    await events.waitFor((e) => (e.data as { orderId?: string }).orderId === other.orderId);
    expect(canceledEventsOf(order.orderId)).toHaveLength(1);

    const pay = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      { type: 'multibanco' },
      order.checkoutKey,
    );
    expect(pay.status).toBe(422);
    expect(pay.body).toMatchObject({
      code: 'BYRD205',
      message: expect.stringContaining('is canceled and cannot be paid'),
    });
  });

  it('cancels nothing without the right key', async () => {
    const order = await h.createOrder();
    const wrong = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/cancel`,
      undefined,
      randomUUID(),
    );
    expect(wrong.status).toBe(404);
    expect((await h.getOrder(order.orderId)).status).toBe('created');
  });

  it('reports readiness without a database', async () => {
    const ready = await fetch(`${h.bffUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', nats: 'up' });
  });
});
