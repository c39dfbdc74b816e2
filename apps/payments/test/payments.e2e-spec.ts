import { createHmac, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { futureExpiry, metricValue, type EventCollector } from '@byrd/platform/testing';
import { EndUnpaidPayments } from '../src/payments/end-unpaid-payments.sweep.js';
import { PaymentsHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('card payments over HTTP', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  it('authorises a frictionless card at once (BYRD200) and announces transaction.payment.success', async () => {
    const { status, body } = await h.pay('5448280000000007', { orderRef: 'frictionless-1' });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      type: 'card',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      status: 'Success',
      brand: 'MASTER',
      paymentMethod: 'card',
      acquirer: 'SIMULATED',
      amount: '25.00',
      isoAmount: 2500,
      currency: 'EUR',
      orderRef: 'frictionless-1',
      isPreAuth: false,
      transactionMode: 'None',
      action: null,
      threeDSecure: { verificationMethod: 'ThreeDSecure', channel: 'Browser', status: 'Authorized' },
    });
    expect(body.transactionId).toMatch(GUID);
    expect(body.requestId).toBeTruthy();
    expect(body.fingerprint).toMatch(GUID);

    const event = await events.waitFor(
      (e) => e.type === 'transaction.payment.success' && (e.data as any).transactionId === body.transactionId,
    );
    expect(event.envelope).toMatchObject({
      paymentMethod: 'card',
      data: {
        status: 'Success',
        operationType: 'Payment',
        amount: '25.00',
        currency: 'EUR',
        code: 'BYRD200',
      },
    });

    const read = await h.request('GET', `/api/v2/transactions/${body.transactionId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 'Success',
      operationType: 'Payment',
      brand: 'MASTER',
      code: 'BYRD200',
      maskedCardNumber: '544828******0007',
      threeDSecure: { status: 'Authorized', transStatus: 'Y', eci: '02', protocolVersion: '2.2.0' },
    });
    expect(read.body.threeDSecure.aav).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(read.body.threeDSecure.dsTransactionId).toMatch(GUID);
  });

  it('takes a two-step payment: created without a card, charged by /pay (checkout key or API key)', async () => {
    const { body: order } = await h.createOrder();
    const created = await h.request(
      'POST',
      `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.orderId,
      },
      { 'x-api-key': '' },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'Created',
      code: 'BYRD010',
      brand: null,
      threeDSecure: null,
      action: null,
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const card = { number: '5555341244441115', expiration: futureExpiry(), cvv: '123' };
    const other = await h.env.createMerchant('Other');
    expect(
      (
        await h.request(
          'POST',
          `/api/v2/payment/${created.body.transactionId}/pay`,
          { card },
          { 'x-api-key': other.apiKey },
        )
      ).status,
    ).toBe(404);

    const paid = await h.request(
      'POST',
      `/api/v2/payment/${created.body.transactionId}/pay?checkoutKey=${order.checkoutKey}`,
      { card },
      { 'x-api-key': '' },
    );
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      transactionId: created.body.transactionId,
      code: 'BYRD207',
      status: 'Created',
      brand: 'MASTER',
      action: { type: 'redirect' },
    });

    const again = await h.request('POST', `/api/v2/payment/${created.body.transactionId}/pay`, { card });
    expect(again.status).toBe(422);

    const { body: direct } = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '30.00',
      currency: 'EUR',
    });
    const charged = await h.request('POST', `/api/v2/payment/${direct.transactionId}/pay`, {
      card: { ...card, number: '4242424242424242' },
    });
    expect(charged.body).toMatchObject({ status: 'Success', code: 'BYRD200', brand: 'VISA' });
    expect(
      (await h.request('POST', `/api/v2/payment/${direct.transactionId}/pay`, {})).body.errors[0].field,
    ).toBe('card');
  });

  it('ends a two-step payment nobody paid before it expired: /pay refuses it, the sweep cancels it with its event, its order is payable again', async () => {
    const { order, anonymous, created, path } = await checkoutPaymentToPay();
    const { body: direct } = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '30.00',
      currency: 'EUR',
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    const lapsed = [created.body.transactionId as string, direct.transactionId as string];
    await h.payments
      .get(DataSource)
      .query(`UPDATE transactions SET expires_at = now() - interval '1 second' WHERE id = ANY ($1)`, [
        lapsed,
      ]);

    const card = { number: '4242424242424242', expiration: futureExpiry(), cvv: '123' };
    const late = await h.request('POST', path, { card }, anonymous);
    expect(late.status).toBe(422);
    expect(JSON.stringify(late.body)).toContain('expired');

    expect(await h.payments.get(EndUnpaidPayments).execute()).toBeGreaterThanOrEqual(2);
    for (const id of lapsed) {
      expect((await h.request('GET', `/api/v2/transactions/${id}`)).body).toMatchObject({
        status: 'Canceled',
        code: 'BYRD205',
      });
      await events.waitFor((e) => e.type === 'transaction.payment.canceled' && e.data.transactionId === id);
    }
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');
    expect((await h.request('POST', `/api/v2/payment/${direct.transactionId}/pay`, { card })).status).toBe(
      422,
    );
  });

  it('a /pay and the unpaid sweep at once, many rounds: the payment is either paid or canceled, never both', async () => {
    const sweep = h.payments.get(EndUnpaidPayments);
    const card = { number: '4242424242424242', expiration: futureExpiry(), cvv: '123' };
    const ended = new Map<string, string>();
    for (let round = 0; round < 15; round++) {
      const { body: payment } = await h.request('POST', '/api/v2/payment', {
        type: 'card',
        amount: '30.00',
        currency: 'EUR',
      });
      // The sweep runs as a replica whose clock says the payment lapsed; /pay's own says it has not.
      const [paid] = await Promise.all([
        h.request('POST', `/api/v2/payment/${payment.transactionId}/pay`, { card }),
        sweep.execute(new Date(Date.now() + 3_600_000)),
      ]);
      const { body: stored } = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
      if (paid.status === 200) expect(stored).toMatchObject({ status: 'Success', code: 'BYRD200' });
      else expect([paid.status, stored.status]).toEqual([422, 'Canceled']);
      ended.set(payment.transactionId, stored.status === 'Success' ? 'success' : 'canceled');
    }
    for (const [id, outcome] of ended)
      await events.waitFor((e) => e.type === `transaction.payment.${outcome}` && e.data.transactionId === id);
    await new Promise((resolve) => setTimeout(resolve, 500)); // room for a second, wrong event
    for (const id of ended.keys()) {
      const endings = events.events.filter(
        (e) => e.envelope.data.transactionId === id && /\.(success|canceled)$/.test(e.envelope.type),
      );
      expect(endings).toHaveLength(1);
    }
  });

  it('reads the query template sent with empty values (?orderRef=x&orderId=&pageNumber=&pageSize=) as those left out', async () => {
    const orderRef = `template-${randomUUID()}`;
    await h.pay('4242424242424242', { orderRef });
    await h.pay('4242424242424242', { orderRef });
    const plain = await h.request('GET', `/api/v2/transactions?orderRef=${orderRef}`);
    expect(plain.body.pagination.totalAvailable).toBe(2);
    const template = await h.request(
      'GET',
      `/api/v2/transactions?orderRef=${orderRef}&orderId=&pageNumber=&pageSize=`,
    );
    expect(template.status).toBe(200);
    expect(template.body).toEqual(plain.body);
    // With neither filter filled in, the list still asks for one (not every transaction at once).
    const none = await h.request('GET', '/api/v2/transactions?orderRef=&orderId=');
    expect(none.status).toBe(400);
    expect(none.body.errors[0].message).toContain('orderId or orderRef is required');
  });

  /** A browser's payment of a new order created without its card, and its `/pay` path. */
  async function checkoutPaymentToPay() {
    const { body: order } = await h.createOrder();
    const checkout = `?checkoutKey=${order.checkoutKey}`;
    const anonymous = { 'x-api-key': '' };
    const created = await h.request(
      'POST',
      `/api/v2/payment${checkout}`,
      { type: 'card', amount: '25.00', currency: 'EUR', orderId: order.orderId },
      anonymous,
    );
    const path = `/api/v2/payment/${created.body.transactionId}/pay${checkout}`;
    return { order, anonymous, created, path };
  }

  it('answers a /pay retried with its idempotency-key after its answer was lost with the payment as it stands, its challenge link again', async () => {
    const { anonymous, created, path } = await checkoutPaymentToPay();
    const card = { number: '5555341244441115', expiration: futureExpiry(), cvv: '123' };
    const key = randomUUID();
    const paid = await h.request('POST', path, { card }, { ...anonymous, 'idempotency-key': key });
    expect(paid.body).toMatchObject({ code: 'BYRD207', action: { type: 'redirect' } });
    // What a process killed after the commit leaves: the card on the payment, no stored answer.
    await h.loseCheckoutAnswer(key);

    const retried = await h.request('POST', path, { card }, { ...anonymous, 'idempotency-key': key });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      transactionId: created.body.transactionId,
      code: 'BYRD207',
      action: { type: 'redirect', url: paid.body.action.url },
      threeDSecure: { id: paid.body.threeDSecure.id },
    });
    const otherKey = await h.request(
      'POST',
      path,
      { card },
      { ...anonymous, 'idempotency-key': randomUUID() },
    );
    expect(otherKey.status).toBe(422);
  });

  it("keeps a browser's card beyond reach of its idempotency row: the hash is keyed by the checkout key, which the row does not hold", async () => {
    // A hash of a card and its CVV keyed by a value stored beside it is brute-forced in minutes
    // from the masked number, expiry and holder the payment keeps. (Its CVV is not hashed at all.)
    const { order, anonymous, path } = await checkoutPaymentToPay();
    const body = { card: { number: '4242424242424242', expiration: futureExpiry(), cvv: '123' } };
    const key = randomUUID();
    const paid = await h.request('POST', path, body, { ...anonymous, 'idempotency-key': key });
    expect(paid.body).toMatchObject({ status: 'Success' });
    const [row] = await h.payments
      .get(DataSource)
      .query(`SELECT merchant_id, request_hash FROM idempotency_keys WHERE key = $1`, [key]);
    expect(JSON.stringify(row).toLowerCase()).not.toContain(order.checkoutKey.toLowerCase());
    const keyedBy = (secret: string) =>
      createHmac('sha256', secret)
        .update(
          `POST ${path}\n${JSON.stringify(body, (field, value) => (field === 'cvv' ? undefined : value))}`,
        )
        .digest('hex');
    expect(row.request_hash).toBe(keyedBy(order.checkoutKey.toLowerCase()));
  });

  it('answers a ?checkoutKey= payment retried with its idempotency-key after its answer was lost with the payment it charged, once', async () => {
    const { body: order } = await h.createOrder();
    const path = `/api/v2/payment?checkoutKey=${order.checkoutKey}`;
    const anonymous = { 'x-api-key': '' };
    const card = { number: '5448280000000007', expiration: futureExpiry(), cvv: '123' };
    const payment = { type: 'card', amount: '25.00', currency: 'EUR', orderId: order.orderId, card };
    const key = randomUUID();
    const paid = await h.request('POST', path, payment, { ...anonymous, 'idempotency-key': key });
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('Success');
    // What a process killed after the commit leaves: the charged payment, no stored answer.
    await h.loseCheckoutAnswer(key);

    const retried = await h.request('POST', path, payment, { ...anonymous, 'idempotency-key': key });
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({
      transactionId: paid.body.transactionId,
      status: 'Success',
      code: 'BYRD200',
    });
    const db = h.payments.get(DataSource);
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger l JOIN transactions t ON t.id = l.reference
        WHERE t.order_id = $1 AND l.outcome = 'Success'`,
      [order.orderId],
    );
    expect(n).toBe(1);

    // Its answer lost again, the key with another card is another request: refused as such.
    await h.loseCheckoutAnswer(key);
    const otherCard = await h.request(
      'POST',
      path,
      { ...payment, card: { ...card, number: '4242424242424242' } },
      { ...anonymous, 'idempotency-key': key },
    );
    expect({ status: otherCard.status, code: otherCard.body.code }).toEqual({ status: 422, code: 'BYRD900' });
    // The shopper's key is scoped by the checkout key: the merchant's own request with the same key
    // is not answered with the shopper's payment.
    const merchants = await h.pay('5448280000000007', {}, { 'idempotency-key': key });
    expect(merchants.status).toBe(201);
    expect(merchants.body.transactionId).not.toBe(paid.body.transactionId);
  });

  it('answers retries of many keys sent at once, each with its own payment, beside requests of new keys', async () => {
    // The look-ups of the keys of requests running together are asked in one statement: each request
    // must still get its own key's payment, and a new key none.
    const card = '5448280000000007';
    const keys = Array.from({ length: 12 }, () => randomUUID());
    const bodyOf = (key: string) => ({ orderRef: `many-${key.slice(0, 8)}` });
    const send = (key: string) => h.pay(card, bodyOf(key), { 'idempotency-key': key });
    const first = await Promise.all(keys.map(send));
    expect(first.map((answer) => answer.body.status)).toEqual(keys.map(() => 'Success'));
    for (const key of keys) await h.loseAnswer(key);

    const fresh = Array.from({ length: 12 }, () => randomUUID());
    const answers = await Promise.all(keys.flatMap((key, i) => [send(key), send(fresh[i])]));
    const retried = answers.filter((_, i) => i % 2 === 0);
    const created = answers.filter((_, i) => i % 2 === 1);
    expect(retried.map((answer) => answer.body.transactionId)).toEqual(
      first.map((answer) => answer.body.transactionId),
    );
    expect(created.map((answer) => answer.body.status)).toEqual(fresh.map(() => 'Success'));
    const rows = await h.payments
      .get(DataSource)
      .query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM transactions WHERE idempotency_key = ANY ($1)`,
        [[...keys, ...fresh]],
      );
    expect(rows[0].n).toBe(24);
  });

  it('refuses a second payment of an order whose pre-authorisation is held, until it is released', async () => {
    const { body: order } = await h.createOrder();
    const payOrder = (extra: Record<string, unknown> = {}) =>
      h.request('POST', '/api/v2/payment', {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.orderId,
        card: { number: '4242424242424242', expiration: futureExpiry(), cvv: '123' },
        ...extra,
      });
    const preAuth = await payOrder({ isPreAuth: true });
    expect(preAuth.body).toMatchObject({ status: 'Success', isPreAuth: true });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const second = await payOrder();
    expect(second.status).toBe(422);
    expect(second.body).toMatchObject({ code: 'BYRD205' });
    expect(second.body.message).toContain(`is pre-authorised by transaction ${preAuth.body.transactionId}`);

    expect((await h.request('POST', `/api/v2/release/${preAuth.body.transactionId}`, {})).status).toBe(200);
    const afterRelease = await payOrder();
    expect(afterRelease.body).toMatchObject({ status: 'Success', code: 'BYRD200' });
  });

  it("keeps a GUID requestId even when the caller's x-request-id is not one", async () => {
    const { status, body, headers } = await h.pay('4242424242424242', {}, { 'x-request-id': 'order-42' });
    expect(status).toBe(201);
    expect(headers.get('x-request-id')).toBe('order-42');
    expect(body.requestId).toMatch(GUID);
  });

  it("exports the acquirer's and the 3DS server's outcomes and latency on GET /metrics", async () => {
    const scrape = async () => (await fetch(`${h.paymentsUrl}/metrics`)).text();
    const acquirer = (text: string, operation: string, outcome: string) =>
      metricValue(text, 'acquirer_request_duration_seconds_count', { operation, outcome }) ?? 0;
    const authentications = (text: string, flow: string, outcome: string) =>
      metricValue(text, 'three_ds_authentications_total', { flow, outcome }) ?? 0;
    const before = await scrape();

    expect((await h.pay('4242424242424242')).body).toMatchObject({ code: 'BYRD200' });
    expect((await h.pay('4000000000000002')).body).toMatchObject({ code: 'BYRD205' });
    const notEnrolled = await h.pay('5505772716954642', { isPreAuth: true });
    expect(notEnrolled.body).toMatchObject({ code: 'BYRD200', isPreAuth: true });
    const capture = await h.request('POST', `/api/v2/capture/${notEnrolled.body.transactionId}`, {});
    expect(capture.status).toBe(200);

    const after = await scrape();
    const grew = (read: (text: string) => number) => read(after) - read(before);
    expect({
      paymentsApproved: grew((t) => acquirer(t, 'Payment', 'Success')),
      paymentsDenied: grew((t) => acquirer(t, 'Payment', 'Denied')),
      preAuths: grew((t) => acquirer(t, 'PreAuth', 'Success')),
      captures: grew((t) => acquirer(t, 'Capture', 'Success')),
      authenticated: grew((t) => authentications(t, 'frictionless', 'Authorized')),
      notEnrolled: grew((t) => authentications(t, 'frictionless', 'NotEnrolled')),
    }).toEqual({
      paymentsApproved: 1,
      paymentsDenied: 1,
      preAuths: 1,
      captures: 1,
      authenticated: 2,
      notEnrolled: 1,
    });
    expect(
      metricValue(after, 'three_ds_request_duration_seconds_count', {
        step: 'start',
        result: 'frictionless',
      }),
    ).toBeGreaterThanOrEqual(3);
  });
});
