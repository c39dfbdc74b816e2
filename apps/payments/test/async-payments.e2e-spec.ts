import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { Rpc } from '@byrd/platform';
import { type EventCollector, futureExpiry } from '@byrd/platform/testing';
import { ASYNC_PAYMENT_PROVIDER, type AsyncPaymentProvider } from '../src/async/async-payment-provider.js';
import { PaymentsHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('async payments (multibanco, mbway) over HTTP', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  /** The transaction.* events of one transaction, in stream order. */
  const eventsOf = (transactionId: string) =>
    events.events.filter((e) => (e.envelope.data as any).transactionId === transactionId);

  it('answers a multibanco payment of an order with an entity and reference (BYRD201), then pays it', async () => {
    const order = (await h.createOrder()).body;
    const created = await h.payAsync('multibanco', { orderId: order.orderId });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'multibanco',
      paymentMethod: 'multibanco',
      code: 'BYRD201',
      description: 'Payment being processed. Waiting for shopper',
      status: 'Processing',
      acquirer: 'SIMULATED',
      amount: '25.00',
      isoAmount: 2500,
      currency: 'EUR',
      orderId: order.orderId,
      brand: null,
      action: null,
      threeDSecure: null,
      isPreAuth: false,
      acceptTokenization: false,
      multibanco: { amount: '25.00', expiresAt: created.body.expiresAt },
    });
    const { transactionId, multibanco } = created.body;
    expect(transactionId).toMatch(GUID);
    expect(multibanco.entity).toMatch(/^\d{5}$/);
    expect(multibanco.reference).toMatch(/^\d{9}$/);
    // The reference cannot outlive the order it pays.
    expect(Date.parse(multibanco.expiresAt)).toBeLessThanOrEqual(Date.parse(order.expiresAt));

    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    const pending = await events.waitFor(
      (e) => e.type === 'transaction.payment.pending' && (e.data as any).transactionId === transactionId,
    );
    expect(pending.envelope).toMatchObject({
      paymentMethod: 'multibanco',
      referenceIds: [order.orderId, transactionId],
      data: { status: 'Processing', operationType: 'Payment', code: 'BYRD201', amount: '25.00' },
    });

    // The merchant can show the reference again from the transaction.
    const read = await h.request('GET', `/api/v2/transactions/${transactionId}`);
    expect(read.body).toMatchObject({ status: 'Processing', paymentMethod: 'multibanco', multibanco });

    const paid = await h.simulate(transactionId, 'pay');
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      transactionId,
      status: 'Success',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      paymentMethod: 'multibanco',
      multibanco: { entity: multibanco.entity, reference: multibanco.reference },
    });

    const paidOrder = await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(paidOrder.paymentId).toBe(transactionId);
    await events.waitFor(
      (e) => e.type === 'transaction.payment.success' && (e.data as any).transactionId === transactionId,
    );
    expect(eventsOf(transactionId).map((e) => e.envelope.type)).toEqual([
      'transaction.payment.pending',
      'transaction.payment.success',
    ]);

    // Settled: a second outcome is refused and announces nothing.
    const again = await h.simulate(transactionId, 'expire');
    expect(again.status).toBe(422);
    expect(again.body.message).toContain('Success');
    expect((await h.request('GET', `/api/v2/transactions/${transactionId}`)).body.status).toBe('Success');
  });

  it('a retry whose first answer was lost gets the same Multibanco reference, never a second payment', async () => {
    const db = h.payments.get(DataSource);
    const order = (await h.createOrder()).body;
    const key = `multibanco-${order.orderId}`;
    const first = await h.payAsync('multibanco', { orderId: order.orderId }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    // What a process killed after the commit leaves: the payment, but no stored answer for the key.
    await h.loseAnswer(key);

    const retried = await h.payAsync('multibanco', { orderId: order.orderId }, { 'idempotency-key': key });
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({
      transactionId: first.body.transactionId,
      status: 'Processing',
      multibanco: { reference: first.body.multibanco.reference },
    });
    // Its answer lost again, the key for an MB WAY request instead is another request: refused.
    await h.loseAnswer(key);
    const other = await h.payAsync('mbway', { orderId: order.orderId }, { 'idempotency-key': key });
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 422, code: 'BYRD900' });
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM transactions WHERE order_id = $1`,
      [order.orderId],
    );
    expect(n).toBe(1);
  });

  it('keeps pending references of a merchant distinct, enforced by the database until one is settled', async () => {
    const first = (await h.payAsync('multibanco')).body;
    const second = (await h.payAsync('multibanco')).body;
    expect(second.multibanco.entity).toBe(first.multibanco.entity); // one entity per merchant
    expect(second.multibanco.reference).not.toBe(first.multibanco.reference);

    const db = h.payments.get(DataSource);
    const reuseFirstReference = () =>
      db.query(`UPDATE transactions SET async_details = $1 WHERE id = $2`, [
        { entity: first.multibanco.entity, reference: first.multibanco.reference },
        second.transactionId,
      ]);
    await expect(reuseFirstReference()).rejects.toThrow(/transactions_pending_multibanco_reference_idx/);
    await h.simulate(first.transactionId, 'pay');
    await expect(reuseFirstReference()).resolves.toBeDefined();
  });

  it('lets a Multibanco reference lapse: Denied BYRD205, transaction.payment.failed, order payable again', async () => {
    const order = (await h.createOrder()).body;
    const { transactionId } = (await h.payAsync('multibanco', { orderId: order.orderId })).body;
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const refused = await h.simulate(transactionId, 'refuse');
    expect(refused.status).toBe(422); // nobody can "refuse" a reference: it is paid or it lapses

    const expired = await h.simulate(transactionId, 'expire');
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({
      status: 'Denied',
      code: 'BYRD205',
      description: 'Operation rejected',
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');
    await events.waitFor(
      (e) => e.type === 'transaction.payment.failed' && (e.data as any).transactionId === transactionId,
    );
    expect((await h.simulate(transactionId, 'pay')).status).toBe(422);
  });

  it('refuses to pay a lapsed MB WAY request before taking its order, so a lost unlock cannot hold the order', async () => {
    const order = (await h.createOrder()).body;
    const { transactionId } = (await h.payAsync('mbway', { orderId: order.orderId })).body;
    await h.payments
      .get(DataSource)
      .query(`UPDATE transactions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        transactionId,
      ]);
    // Whatever lock this payment would take, it could not give back.
    await h.ordersStopAnswering('rpc.orders.unlockPayment');
    try {
      const late = await h.simulate(transactionId, 'pay');
      expect(late.status).toBe(422);
      expect(late.body.message).toContain('can no longer be paid');
    } finally {
      await h.restartOrders();
    }
    // Not held by the lapsed request: the shopper pays by card at once.
    const card = await h.pay('4242424242424242', { orderId: order.orderId });
    expect(card.body).toMatchObject({ status: 'Success', code: 'BYRD200' });
  });

  it('sends an MB WAY request to a normalised phone; the shopper refusing cancels it and the order is payable again', async () => {
    const order = (await h.createOrder()).body;
    const created = await h.payAsync('mbway', {
      orderId: order.orderId,
      mbway: { phoneNumber: '+351 912 345 678' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'mbway',
      paymentMethod: 'mbway',
      code: 'BYRD201',
      status: 'Processing',
      mbway: { phoneNumber: '+351912345678' },
    });
    expect(created.body.multibanco).toBeUndefined();
    const { transactionId } = created.body;
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const refused = await h.simulate(transactionId, 'refuse');
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({
      status: 'Canceled',
      code: 'BYRD208',
      description: 'Payment canceled by the shopper',
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');
    await events.waitFor(
      (e) => e.type === 'transaction.payment.canceled' && (e.data as any).transactionId === transactionId,
    );
    expect(eventsOf(transactionId).map((e) => [e.envelope.type, e.envelope.paymentMethod])).toEqual([
      ['transaction.payment.pending', 'mbway'],
      ['transaction.payment.canceled', 'mbway'],
    ]);
  });

  it('pays an order through the hosted form (checkoutKey) with MB WAY, accepted in the app', async () => {
    const order = (await h.createOrder()).body;
    const created = await h.payAsync(
      'mbway',
      { orderId: order.orderId },
      { 'x-api-key': '' }, // a browser has the order's checkout key, not the merchant's API key
    );
    expect(created.status).toBe(401);

    const viaCheckout = await h.call(
      h.paymentsUrl,
      'POST',
      `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
      {
        type: 'mbway',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.orderId,
        mbway: { phoneNumber: '962345678' },
      },
      { 'x-api-key': '' },
    );
    expect(viaCheckout.status).toBe(201);
    expect(viaCheckout.body).toMatchObject({ status: 'Processing', mbway: { phoneNumber: '+351962345678' } });

    const accepted = await h.simulate(viaCheckout.body.transactionId, 'pay');
    expect(accepted.body).toMatchObject({ status: 'Success', code: 'BYRD200', initiatedFrom: 'HostedForm' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it('refuses bad input naming the field', async () => {
    const badPhone = await h.payAsync('mbway', { mbway: { phoneNumber: '212345678' } });
    expect(badPhone.status).toBe(400);
    expect(badPhone.body.code).toBe('BYRD900');
    expect(badPhone.body.errors).toEqual([{ field: 'mbway.phoneNumber', message: expect.any(String) }]);

    const noPhone = await h.payAsync('mbway', { mbway: undefined });
    expect(noPhone.status).toBe(400);
    expect(noPhone.body.errors.map((e: any) => e.field)).toEqual(['mbway']);

    const withCard = await h.payAsync('multibanco', {
      card: { number: '5448280000000007', expiration: futureExpiry(), cvv: '123' },
    });
    expect(withCard.status).toBe(400);
    expect(withCard.body.errors.map((e: any) => e.field)).toEqual(['card']);

    const dollars = await h.payAsync('multibanco', { currency: 'USD' });
    expect(dollars.status).toBe(400);
    expect(dollars.body.errors.map((e: any) => e.field)).toEqual(['currency']);

    const preAuth = await h.payAsync('mbway', { isPreAuth: true });
    expect(preAuth.status).toBe(400);
    expect(preAuth.body.errors.map((e: any) => e.field)).toEqual(['isPreAuth']);

    const order = (await h.createOrder()).body;
    const wrongAmount = await h.payAsync('multibanco', { orderId: order.orderId, amount: '24.99' });
    expect(wrongAmount.status).toBe(400);
    expect(wrongAmount.body.errors.map((e: any) => e.field)).toEqual(['amount']);
  });

  it('refuses a method the order does not offer (422 BYRD292)', async () => {
    const order = (await h.createOrder({ paymentOptions: { allowedPaymentMethods: ['card', 'mbway'] } }))
      .body;
    const answer = await h.payAsync('multibanco', { orderId: order.orderId });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('BYRD292');
    expect((await h.payAsync('mbway', { orderId: order.orderId })).status).toBe(201);
  });

  it('refuses Multibanco and MB WAY for an order asking for a pre-authorisation (422 BYRD292), before any reference or push', async () => {
    const provider = h.payments.get<AsyncPaymentProvider>(ASYNC_PAYMENT_PROVIDER);
    const drawn = jest.spyOn(provider, 'multibancoReference');
    const pushed = jest.spyOn(provider, 'requestMbWay');
    try {
      const order = (await h.createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } })).body;
      const asShopper = (type: 'multibanco' | 'mbway') =>
        h.call(
          h.paymentsUrl,
          'POST',
          `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
          {
            type,
            amount: '25.00',
            currency: 'EUR',
            orderId: order.orderId,
            ...(type === 'mbway' ? { mbway: { phoneNumber: '912345678' } } : {}),
          },
          { 'x-api-key': '' },
        );
      const answers = [
        await h.payAsync('multibanco', { orderId: order.orderId }),
        await h.payAsync('mbway', { orderId: order.orderId }),
        await asShopper('multibanco'),
        await asShopper('mbway'),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(422);
        expect(answer.body).toMatchObject({
          code: 'BYRD292',
          message: expect.stringContaining('cannot pre-authorise'),
          requestId: expect.stringMatching(GUID),
        });
      }
      expect(drawn).not.toHaveBeenCalled();
      expect(pushed).not.toHaveBeenCalled();
      const listed = await h.request('GET', `/api/v2/transactions?orderId=${order.orderId}`);
      expect(listed.body.data ?? listed.body).toEqual([]);
      const untouched = (await h.getOrder(order.orderId)).body;
      expect(untouched).toMatchObject({ status: 'created', transactions: [] });

      // The card pre-authorises it, as the order asks.
      const held = await h.pay('5448280000000007', { orderId: order.orderId, amount: '25.00' });
      expect(held.body).toMatchObject({ status: 'Success', isPreAuth: true });
    } finally {
      drawn.mockRestore();
      pushed.mockRestore();
    }
  });

  it('simulates for sandbox keys only, on the merchant’s own pending async payments', async () => {
    const { transactionId } = (await h.payAsync('multibanco')).body;

    const live = await h.env.createMerchant('Live Shop', 'live');
    const asLive = await h.simulate(transactionId, 'pay', { 'x-api-key': live.apiKey });
    expect(asLive.status).toBe(403);
    expect(asLive.body.code).toBe('BYRD403');

    const other = await h.env.createMerchant('Other Shop');
    const asOther = await h.simulate(transactionId, 'pay', { 'x-api-key': other.apiKey });
    expect(asOther.status).toBe(404);
    expect(asOther.body.code).toBe('BYRD901');

    const card = (await h.pay('5448280000000007')).body;
    expect((await h.simulate(card.transactionId, 'pay')).status).toBe(422);
    expect((await h.simulate(transactionId, 'teleport')).status).toBe(404);

    // None of the refusals touched the payment.
    expect((await h.request('GET', `/api/v2/transactions/${transactionId}`)).body.status).toBe('Processing');
  });

  it('takes no async payment from a live key: no live processor is configured', async () => {
    const live = await h.env.createMerchant('Live Shop', 'live');
    const answer = await h.payAsync('multibanco', {}, { 'x-api-key': live.apiKey });
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('BYRD291');
  });

  it('voids the open references and MB WAY requests of an order canceled meanwhile', async () => {
    const order = (await h.createOrder()).body;
    const attempts = [
      await h.payAsync('multibanco', { orderId: order.orderId }),
      await h.payAsync('mbway', { orderId: order.orderId }),
    ].map((answer) => answer.body.transactionId as string);
    // Async attempts do not hold the order, so the hosted form's cancel goes through.
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    expect(
      await h.orders
        .get(Rpc)
        .call('rpc.orders.cancel', { orderId: order.orderId, checkoutKey: order.checkoutKey }),
    ).toEqual({ orderId: order.orderId, status: 'canceled' });

    for (const transactionId of attempts) {
      await events.waitFor(
        (e) => e.type === 'transaction.payment.canceled' && (e.data as any).transactionId === transactionId,
      );
      const read = await h.request('GET', `/api/v2/transactions/${transactionId}`);
      expect(read.body).toMatchObject({ status: 'Canceled' });
    }
    expect((await h.getOrder(order.orderId)).body.status).toBe('canceled');
  });

  it('a cancel racing the shopper paying a reference: the order is paid, or canceled and not charged, many rounds', async () => {
    for (let round = 0; round < 12; round++) {
      const order = (await h.createOrder()).body;
      const { transactionId } = (await h.payAsync('multibanco', { orderId: order.orderId })).body;
      const [cancel, pay] = await Promise.all([
        h.orders
          .get(Rpc)
          .call('rpc.orders.cancel', { orderId: order.orderId, checkoutKey: order.checkoutKey })
          .then(
            () => 'canceled',
            () => 'refused',
          ),
        h.simulate(transactionId, 'pay'),
      ]);
      if (cancel === 'refused') {
        // The money came first and took the order.
        expect(pay.body.status).toBe('Success');
        await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
        continue;
      }
      // Canceled: the reference ends voided, or its money (if it got through) is given back at once.
      let status = 'Processing';
      for (const deadline = Date.now() + 10_000; status === 'Processing' && Date.now() < deadline;) {
        status = (await h.request('GET', `/api/v2/transactions/${transactionId}`)).body.status;
        if (status === 'Processing') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(['Canceled', 'Success']).toContain(status);
      if (status === 'Success') {
        await events.waitFor(
          (e) =>
            e.type === 'transaction.refund.success' && (e.data as any).sourceTransactionId === transactionId,
        );
      }
      expect((await h.getOrder(order.orderId)).body.status).toBe('canceled');
    }
  }, 60_000);

  it('voids a reference committed after its order was canceled and the cancel was handled', async () => {
    const db = h.payments.get(DataSource);
    const order = (await h.createOrder()).body;
    const handled = async () =>
      (
        await db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM inbox WHERE consumer = 'payments-order-canceled'`,
        )
      )[0].n;
    const handledBefore = await handled();
    // The payment's insert waits on this lock: it read the order open, and commits only after the
    // cancel and its event's handling, which therefore finds nothing to void.
    const blocker = db.createQueryRunner();
    await blocker.startTransaction();
    let creating: Promise<Awaited<ReturnType<PaymentsHarness['payAsync']>>>;
    try {
      await blocker.query('LOCK TABLE transactions IN SHARE MODE');
      creating = h.payAsync('multibanco', { orderId: order.orderId });
      for (const deadline = Date.now() + 10_000; ;) {
        const [{ n }] = await db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "transactions"%'`,
        );
        if (n > 0) break;
        if (Date.now() > deadline) throw new Error('the payment never waited at its insert');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await h.orders
        .get(Rpc)
        .call('rpc.orders.cancel', { orderId: order.orderId, checkoutKey: order.checkoutKey });
      for (const deadline = Date.now() + 10_000; (await handled()) === handledBefore;) {
        if (Date.now() > deadline) throw new Error('order.canceled was never handled');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await blocker.commitTransaction();
      await blocker.release();
    }
    const created = await creating!;
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('Canceled');
    const read = await h.request('GET', `/api/v2/transactions/${created.body.transactionId}`);
    expect(read.body.status).toBe('Canceled');
  });
});

describe('async payments left waiting past their expiry', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start({ ASYNC_LAPSE_SWEEP_MS: '100', ASYNC_LAPSE_GRACE_MS: '0' });
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  it('are canceled and announced by the service itself, and their order is payable again', async () => {
    // An MB WAY request the shopper never got (the process was killed before the push) and whose
    // processor will never write: nothing but its expiry says it is over.
    const order = (await h.createOrder()).body;
    const created = await h.payAsync('mbway', {
      orderId: order.orderId,
      mbway: { phoneNumber: '912345678' },
    });
    expect(created.body.status).toBe('Processing');
    const { transactionId } = created.body;
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    await h.payments
      .get(DataSource)
      .query(`UPDATE transactions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        transactionId,
      ]);

    await events.waitFor(
      (e) => e.type === 'transaction.payment.canceled' && (e.data as any).transactionId === transactionId,
    );
    const read = await h.request('GET', `/api/v2/transactions/${transactionId}`);
    expect(read.body).toMatchObject({ status: 'Canceled', code: 'BYRD205' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');
    const card = await h.pay('4242424242424242', { amount: order.amount, orderId: order.orderId });
    expect(card.body).toMatchObject({ status: 'Success' });
  });
});
