import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { futureExpiry } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

/** Every card of the sandbox table (API-FACTS.md), over HTTP, with the order following each outcome. */
describe('sandbox test cards', () => {
  let h: PaymentsHarness;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
  });
  afterAll(() => h?.stop());

  it.each([
    ['5448280000000007', 'MASTER', 'Success', 'BYRD200', 'Authorized', 'paid'],
    ['4200000000000000', 'VISA', 'Success', 'BYRD200', 'Authorized', 'paid'],
    ['4242424242424242', 'VISA', 'Success', 'BYRD200', 'Authorized', 'paid'],
    ['4000000000000119', 'VISA', 'Error', 'BYRD299', 'Authorized', 'created'],
    ['5201282999005515', 'MASTER', 'TemporaryFailed', 'BYRD203', 'Authorized', 'pending'],
    ['5505772716954642', 'MASTER', 'Success', 'BYRD200', 'NotEnrolled', 'paid'],
    ['2720290928104209', 'MASTER', 'Denied', 'BYRD205', 'Unauthorized', 'created'],
    ['4000000000000002', 'VISA', 'Denied', 'BYRD205', 'Authorized', 'created'],
  ])('%s (%s) → %s %s, 3DS %s, order %s', async (card, brand, status, code, threeDS, orderStatus) => {
    const { body: order } = await h.createOrder();
    const { status: http, body } = await h.pay(card, { orderId: order.orderId, orderRef: order.orderRef });
    expect(http).toBe(201);
    expect(body).toMatchObject({
      brand,
      status,
      code,
      orderId: order.orderId,
      threeDSecure: { status: threeDS },
      action: null,
    });
    const settled = await h.waitForOrder(
      order.orderId,
      (o) => o.transactions.length === 1 && o.transactions[0].status === status,
    );
    expect(settled.status).toBe(orderStatus);
  });

  it.each(['5555341244441115', '4000000000003220'])(
    '%s asks for a 3DS challenge: BYRD207, status Created, a redirect action and threeDSecure',
    async (card) => {
      const { body: order } = await h.createOrder();
      const { status, body } = await h.pay(card, { orderId: order.orderId, orderRef: order.orderRef });
      expect(status).toBe(201);
      expect(body).toMatchObject({
        code: 'BYRD207',
        description: 'Pending redirect',
        status: 'Created',
        action: { type: 'redirect' },
        threeDSecure: { verificationMethod: 'ThreeDSecure', channel: 'Browser', status: 'Created' },
      });
      expect(body.action.url).toBe(`http://127.0.0.1:1/3ds/authenticate/${body.threeDSecure.id}`);
      expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now());
      expect(
        (await h.waitForOrder(order.orderId, (o) => o.status === 'pending')).transactions[0].status,
      ).toBe('Created');
    },
  );

  it.each([
    ['10.00', 'Denied', 'BYRD205'],
    ['10.01', 'TemporaryFailed', 'BYRD203'],
    ['10.02', 'Error', 'BYRD299'],
    ['11.00', 'Success', 'BYRD200'],
  ])('applies the amount rules to other cards: %s → %s', async (amount, status, code) => {
    const { body } = await h.pay('5105105105105100', { amount });
    expect(body).toMatchObject({ status, code });
  });

  it('lets card rules win over amount rules', async () => {
    expect((await h.pay('4242424242424242', { amount: '5.00' })).body.status).toBe('Success');
  });

  it('refuses invalid cards with 400 BYRD900 naming the field', async () => {
    const luhn = await h.pay('4242424242424241');
    expect(luhn.status).toBe(400);
    expect(luhn.body).toMatchObject({ code: 'BYRD900', errors: [{ field: 'card.number' }] });

    const expired = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      card: { number: '4242424242424242', expiration: '01/20', cvv: '123' },
    });
    expect(expired.body.errors).toEqual([{ field: 'card.expiration', message: 'the card has expired' }]);

    const amexCvv = await h.pay('378282246310005');
    expect(amexCvv.body.errors).toEqual([{ field: 'card.cvv', message: 'must be 4 digits for AMEX' }]);
  });

  it("refuses to pay a paid order, another merchant's order, or with the wrong amount", async () => {
    const { body: order } = await h.createOrder();
    expect(
      (await h.pay('4242424242424242', { orderId: order.orderId, amount: '24.00' })).body.errors[0].field,
    ).toBe('amount');
    expect((await h.pay('4242424242424242', { orderId: order.orderId })).body.status).toBe('Success');
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    const again = await h.pay('4242424242424242', { orderId: order.orderId });
    expect(again.status).toBe(422);
    expect(again.body.message).toContain('paid');

    const other = await h.env.createMerchant('Other');
    const foreign = await h.pay(
      '4242424242424242',
      { orderId: (await h.createOrder()).body.orderId },
      { 'x-api-key': other.apiKey },
    );
    expect(foreign.status).toBe(404);
  });

  it('pays an order from the browser with its checkoutKey instead of an API key', async () => {
    const { body: order } = await h.createOrder();
    const path = `/api/v2/payment?checkoutKey=${order.checkoutKey}`;
    const body = {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: order.orderId,
      card: { number: '5448280000000007', expiration: futureExpiry(), cvv: '123' },
    };
    const paid = await h.request('POST', path, body, { 'x-api-key': '' });
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('Success');
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    const read = await h.request('GET', `/api/v2/transactions/${paid.body.transactionId}`);
    expect(read.body.initiatedFrom).toBe('HostedForm');

    const wrongKey = await h.request('POST', `/api/v2/payment?checkoutKey=${randomUUID()}`, body, {
      'x-api-key': '',
    });
    expect(wrongKey.status).toBe(404);
    const noKey = await h.request('POST', '/api/v2/payment', body, { 'x-api-key': '' });
    expect(noKey.status).toBe(401);
  });

  it('refuses a malformed checkoutKey with 400 before its idempotency-key is written, whatever its bytes', async () => {
    const db = h.payments.get(DataSource);
    const body = { type: 'card', amount: '25.00', currency: 'EUR', orderId: randomUUID() };
    for (const checkoutKey of ['%00', 'not-a-guid', 'k'.repeat(3_000)]) {
      const key = randomUUID();
      const answer = await h.request('POST', `/api/v2/payment?checkoutKey=${checkoutKey}`, body, {
        'x-api-key': '',
        'idempotency-key': key,
      });
      expect({
        checkoutKey: checkoutKey.slice(0, 12),
        status: answer.status,
        code: answer.body.code,
      }).toEqual({
        checkoutKey: checkoutKey.slice(0, 12),
        status: 400,
        code: 'BYRD900',
      });
      // No caller proved anything: nothing of this request is kept.
      expect(await db.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key])).toEqual([]);
    }
  });

  it('refuses live keys while only the sandbox acquirer is installed', async () => {
    const live = await h.env.createMerchant('Live shop', 'live');
    const answer = await h.pay('4242424242424242', {}, { 'x-api-key': live.apiKey });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('BYRD291');
  });

  it('creates exactly one transaction for 50 concurrent identical requests with one idempotency-key', async () => {
    const key = randomUUID();
    const orderRef = `idem-${key}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => h.pay('4242424242424242', { orderRef }, { 'idempotency-key': key })),
    );
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.transactionId));
    expect(ids.size).toBe(1);
    const list = await h.request('GET', `/api/v2/transactions?orderRef=${orderRef}`);
    expect(list.body.pagination.totalAvailable).toBe(1);
  });
});
