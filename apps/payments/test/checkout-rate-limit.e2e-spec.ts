import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { callHttp, futureExpiry, type HttpAnswer } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const DENIED = '4000000000000002';
const ORDER_MAX = 3;
const ADDRESS_MAX = 5;
const card = (number = DENIED) => ({ number, expiration: futureExpiry(), cvv: '123' });

type Order = { orderId: string; checkoutKey: string };

/**
 * Card testing through an order link: a browser (the SDK) pays with `?checkoutKey=`, which every
 * order link carries. Its attempts are held to the hosted form's limits: per order from any
 * addresses, and per client address (the Ingress's hop of X-Forwarded-For), over every replica.
 */
describe('checkout-key payments are rate limited like the hosted form', () => {
  let h: PaymentsHarness;
  beforeAll(async () => {
    h = await PaymentsHarness.start({
      RATE_LIMIT_ORDER_PAYMENTS_MAX: String(ORDER_MAX),
      RATE_LIMIT_PAYMENTS_MAX: String(ADDRESS_MAX),
      RATE_LIMIT_WINDOW_MS: '60000',
    });
  });
  afterAll(() => h?.stop());

  async function newOrder(): Promise<Order> {
    const { status, body } = await h.createOrder();
    expect(status).toBe(201);
    return body as Order;
  }

  /** A browser paying the order with its checkout key (no API key), from `address` as the proxy saw it. */
  const browserPays = (
    order: Order,
    address: string,
    headers: Record<string, string> = {},
    base = h.paymentsUrl,
  ) =>
    callHttp(
      base,
      'POST',
      `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
      { type: 'card', amount: '25.00', currency: 'EUR', orderId: order.orderId, card: card() },
      { 'x-forwarded-for': address, ...headers },
    );

  /** A browser creating a card payment of the order without its card (a two-step payment's first step). */
  const createsCardLess = (order: Order, address: string) =>
    callHttp(
      h.paymentsUrl,
      'POST',
      `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
      { type: 'card', amount: '25.00', currency: 'EUR', orderId: order.orderId },
      { 'x-forwarded-for': address },
    );

  /** The browser's second step: the card for the payment `paymentId` names (as written). */
  const paysCard = (order: Order, paymentId: string, address: string) =>
    callHttp(
      h.paymentsUrl,
      'POST',
      `/api/v2/payment/${paymentId}/pay?checkoutKey=${order.checkoutKey}`,
      { card: card() },
      { 'x-forwarded-for': address },
    );

  const transactionsOf = async (orderId: string): Promise<number> => {
    const [row] = await h.payments
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM transactions WHERE order_id = $1`, [orderId]);
    return row.n;
  };

  const expectDenied = (answer: HttpAnswer) => {
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
  };

  const expectLimited = (answer: HttpAnswer, about: string) => {
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({
      code: 'BYRD206',
      description: 'Operation blocked by velocity',
      message: `Too many requests ${about}; retry later`,
      requestId: expect.any(String),
    });
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  };

  it('holds one order link to its limit from any addresses; the refused attempt writes nothing', async () => {
    const order = await newOrder();
    // A card tester with one link: each declined card frees the order for the next one.
    for (let i = 0; i < ORDER_MAX; i += 1) expectDenied(await browserPays(order, `203.0.113.${10 + i}`));

    const key = randomUUID();
    expectLimited(await browserPays(order, '203.0.113.30', { 'idempotency-key': key }), 'on this order');
    // Refused before the payment, the order's lookup and the idempotency-key's claim.
    expect(await transactionsOf(order.orderId)).toBe(ORDER_MAX);
    const [claims] = await h.payments
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`, [key]);
    expect(claims.n).toBe(0);

    // The second step (`/pay`) counts on the order of its payment too: a payment the merchant created
    // without a card cannot be charged by the browser past the limit.
    const created = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: order.orderId,
    });
    expect(created.body).toMatchObject({ status: 'Created', code: 'BYRD010' });
    const browserPay = await paysCard(order, created.body.transactionId as string, '203.0.113.31');
    expectLimited(browserPay, 'on this order');
    const waiting = await h.request('GET', `/api/v2/transactions/${created.body.transactionId}`);
    expect(waiting.body).toMatchObject({ status: 'Created', maskedCardNumber: null });

    // The merchant's backend (API key) is not limited by this, on the same order from the same address.
    const merchantPay = await h.request(
      'POST',
      `/api/v2/payment/${created.body.transactionId}/pay`,
      { card: card() },
      { 'x-forwarded-for': '203.0.113.31' },
    );
    expect(merchantPay.status).toBe(200);
    expect(merchantPay.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    for (let i = 0; i <= ADDRESS_MAX; i += 1) {
      expectDenied(
        await h.pay(
          DENIED,
          { orderId: order.orderId, orderRef: undefined },
          { 'x-forwarded-for': '203.0.113.31' },
        ),
      );
    }
  });

  it("replays an answered attempt's idempotency-key past the limit, and its repeats do not count", async () => {
    const order = await newOrder();
    const key = { 'idempotency-key': randomUUID() };
    const first = await browserPays(order, '203.0.113.60', key);
    expectDenied(first);
    // The shopper's retries of that request (its answer lost) get its answer, however many.
    for (let i = 0; i < ORDER_MAX + 1; i += 1) {
      const repeat = await browserPays(order, `203.0.113.${61 + i}`, key);
      expect(repeat.status).toBe(201);
      expect(repeat.headers.get('idempotent-replayed')).toBe('true');
      expect(repeat.body).toEqual(first.body);
    }
    // They did not count: the link still has the rest of its attempts, then the limit.
    for (let i = 1; i < ORDER_MAX; i += 1) expectDenied(await browserPays(order, `203.0.113.${70 + i}`));
    expectLimited(await browserPays(order, '203.0.113.80'), 'on this order');
    // Past the limit, the answered request is still replayed, not refused.
    const late = await browserPays(order, '203.0.113.81', key);
    expect(late.status).toBe(201);
    expect(late.body).toEqual(first.body);
    expect(await transactionsOf(order.orderId)).toBe(ORDER_MAX);
  });

  it('counts a two-step payment (created without its card, then /pay) as one attempt', async () => {
    const order = await newOrder();
    const twoStep = async (address: string) => {
      const created = await createsCardLess(order, address);
      expect(created.body).toMatchObject({ status: 'Created', code: 'BYRD010' });
      return paysCard(order, created.body.transactionId as string, address);
    };
    // As many cards through the SDK's two steps as through the form.
    for (let i = 0; i < ORDER_MAX; i += 1) {
      const paid = await twoStep(`203.0.113.${90 + i}`);
      expect(paid.status).toBe(200);
      expect(paid.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    }
    expectLimited(await browserPays(order, '203.0.113.99'), 'on this order');
  });

  it('counts a /pay naming its payment in capitals on its order too (the guard reads the id as the route does)', async () => {
    const order = await newOrder();
    const pay = (transactionId: string, address: string) =>
      paysCard(order, transactionId.toUpperCase(), address);
    const created: string[] = [];
    for (let i = 0; i < ORDER_MAX; i += 1) {
      const address = `203.0.113.${160 + i}`;
      const payment = await createsCardLess(order, address);
      created.push(payment.body.transactionId as string);
      const paid = await pay(created[i], address);
      expect(paid.status).toBe(200);
      expect(paid.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    }
    // One more card through the same order link, from yet another address: limited on the order.
    expectLimited(await pay(created[0], '203.0.113.170'), 'on this order');
  });

  it('holds the payments an order link creates without a card to the order limit too, apart from its card attempts', async () => {
    const order = await newOrder();
    const createCardLess = (address: string) => createsCardLess(order, address);
    for (let i = 0; i < ORDER_MAX; i += 1) {
      const created = await createCardLess(`203.0.113.${120 + i}`);
      expect(created.body).toMatchObject({ status: 'Created', code: 'BYRD010' });
    }
    // From any address: each was a row and two events, which nothing else bounded.
    expectLimited(await createCardLess('203.0.113.130'), 'on this order');
    expect(await transactionsOf(order.orderId)).toBe(ORDER_MAX);
    // The link's card attempts are counted apart: all of them are still there.
    for (let i = 0; i < ORDER_MAX; i += 1) expectDenied(await browserPays(order, `203.0.113.${140 + i}`));
    expectLimited(await browserPays(order, '203.0.113.150'), 'on this order');
  });

  it('holds one address to its limit of card-less creates over any orders (a new order link each time)', async () => {
    const address = '198.51.100.60';
    const createCardLess = async () => createsCardLess(await newOrder(), address);
    for (let i = 0; i < ADDRESS_MAX; i += 1)
      expect((await createCardLess()).body).toMatchObject({ status: 'Created', code: 'BYRD010' });
    expectLimited(await createCardLess(), 'from this address');
  });

  it('holds one address to its limit over any orders; another address still pays', async () => {
    const address = '198.51.100.7';
    for (let i = 0; i < ADDRESS_MAX; i += 1) expectDenied(await browserPays(await newOrder(), address));
    const order = await newOrder();
    expectLimited(await browserPays(order, address), 'from this address');
    expect(await transactionsOf(order.orderId)).toBe(0);
    expectDenied(await browserPays(order, '198.51.100.8'));
  });

  it('shares the counts between replicas: an order link spread over two gets the limit once', async () => {
    const replica = await h.startReplica();
    const order = await newOrder();
    const bases = [h.paymentsUrl, replica, h.paymentsUrl];
    for (const [i, base] of bases.entries())
      expectDenied(await browserPays(order, `192.0.2.${10 + i}`, {}, base));
    expectLimited(await browserPays(order, '192.0.2.20', {}, replica), 'on this order');
    expectLimited(await browserPays(order, '192.0.2.21', {}, h.paymentsUrl), 'on this order');

    // Attempts at once on both replicas are each counted (compare-and-set): of 8, ORDER_MAX get through
    // (to be paid, or refused as another attempt holds the order), the others are limited.
    const other = await newOrder();
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        browserPays(other, `192.0.2.${30 + i}`, {}, i % 2 ? replica : h.paymentsUrl),
      ),
    );
    const statuses = burst.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8 - ORDER_MAX);
    expect(statuses.filter((status) => status !== 429).every((s) => s === 201 || s === 422)).toBe(true);
  });

  it("neither counts nor refuses the hosted form's own payments (rpc.payments.create: its backend counts them)", async () => {
    const bff = h.rpcAs('hosted-form-bff');
    const formPays = (order: Order) =>
      bff.call('rpc.payments.create', {
        orderId: order.orderId,
        checkoutKey: order.checkoutKey,
        payment: { type: 'card', card: card() },
        saveCard: false,
      });
    const order = await newOrder();
    for (let i = 0; i < ORDER_MAX - 1; i += 1) expectDenied(await browserPays(order, `198.51.100.${40 + i}`));
    for (let i = 0; i < 2; i += 1) expect(await formPays(order)).toMatchObject({ status: 'Denied' });
    // The form's two did not count: the link still has its last attempt.
    expectDenied(await browserPays(order, '198.51.100.50'));
    expectLimited(await browserPays(order, '198.51.100.51'), 'on this order');
    // And the form still pays the order once the link is over its limit.
    expect(await formPays(order)).toMatchObject({ status: 'Denied' });
  });
});
