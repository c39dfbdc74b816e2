import { randomUUID } from 'node:crypto';
import type { EventCollector } from '@byrd/platform/testing';
import { Rpc } from '@byrd/platform';
import { DataSource } from 'typeorm';
import { ExpireOrders } from '../src/orders/expire-orders.usecase.js';
import { OrdersHarness } from './harness.js';

/** The order state machine, driven by transaction.* events on the real stream. */
describe('order lifecycle', () => {
  let h: OrdersHarness;
  let events: EventCollector;

  beforeAll(async () => {
    // One minute of expiresIn lasts 300 ms here, so expiry runs in about a second.
    h = await OrdersHarness.start({ ORDER_EXPIRY_UNIT_MS: '300', ORDER_EXPIRY_SWEEP_MS: '100' });
    events = await h.env.collect('order.>');
  });
  afterAll(() => h?.stop());

  /**
   * An order that outlives its test (a day here: 432 s) unless the test asks for an expiry: with the
   * 15-minute default (4.5 s here) the sweep, every 100 ms, could expire it mid-test on a loaded machine.
   */
  const createOrder = (overrides: Record<string, unknown> = {}) =>
    h.createOrder({ expiresIn: 24 * 60, ...overrides });
  /** Puts an order's expiresAt in the past, once the test holds it as it needs (paid, locked). */
  const age = (orderId: string) =>
    h.app
      .get(DataSource)
      .query(`UPDATE orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [orderId]);

  const orderEvents = (orderId: string) =>
    events.events
      .filter((e) => (e.envelope.data as { orderId: string }).orderId === orderId)
      .map((e) => e.envelope.type);
  /** This run's Rpc of `service`, signing as it. */
  const as = (service: string) => new Rpc(h.env.nats, service, h.env.rpcIdentity(service));

  it('pending → paid with paymentId and transactionId, announced once even when the outcome arrives twice', async () => {
    const { body: order } = await createOrder();
    const transactionId = randomUUID();

    await h.publishTransaction('transaction.payment.pending', order, { transactionId, status: 'Processing' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    await events.waitFor((e) => e.type === 'order.pending' && (e.data as any).orderId === order.orderId);

    const success = await h.publishTransaction('transaction.payment.success', order, { transactionId });
    await h.env.publish({ ...success, id: randomUUID() }); // a second copy under another id
    const paid = await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(paid).toMatchObject({ paymentId: transactionId, lastTransactionId: transactionId });
    // `id` as API-FACTS names it (clients that refund from the order read it), `transactionId` as before.
    expect(paid.transactions).toEqual([
      expect.objectContaining({
        id: transactionId,
        transactionId,
        status: 'Success',
        operationType: 'Payment',
        amount: '25.00',
      }),
    ]);

    const paidEvent = await events.waitFor(
      (e) => e.type === 'order.paid' && (e.data as any).orderId === order.orderId,
    );
    expect(paidEvent.envelope).toMatchObject({
      paymentMethod: 'card',
      referenceIds: [order.orderId, transactionId],
      data: { status: 'paid', paymentId: transactionId, transactionId, amount: '25.00', currency: 'EUR' },
    });

    // A late "pending" cannot undo the payment.
    await h.publishTransaction('transaction.payment.pending', order, { transactionId, status: 'Processing' });
    await new Promise((r) => setTimeout(r, 500));
    expect((await h.request('GET', `/api/v2/orders/${order.orderId}`)).body.status).toBe('paid');
    expect(orderEvents(order.orderId)).toEqual(['order.created', 'order.pending', 'order.paid']);
  });

  it('announces a partial refund once, even when its outcome arrives twice', async () => {
    const { body: order } = await createOrder();
    await h.publishTransaction('transaction.payment.success', order, { transactionId: randomUUID() });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    const refund = await h.publishTransaction('transaction.refund.success', order, {
      transactionId: randomUUID(),
      operationType: 'Refund',
      amount: '10.00',
    });
    await h.env.publish({ ...refund, id: randomUUID() }); // a second copy under another id
    await h.waitForOrder(order.orderId, (o) => o.refundedAmount === '10.00');
    await new Promise((r) => setTimeout(r, 500));
    expect(orderEvents(order.orderId)).toEqual(['order.created', 'order.paid', 'order.partialrefunded']);
  });

  it('stays created when every attempt fails; a timed-out one is pending and announced as a temporary failure', async () => {
    const { body: order } = await createOrder();
    await h.publishTransaction('transaction.payment.failed', order, {
      transactionId: randomUUID(),
      status: 'Denied',
      code: 'BYRD205',
    });
    await h.waitForOrder(order.orderId, (o) => o.transactions.length === 1);
    expect((await h.request('GET', `/api/v2/orders/${order.orderId}`)).body.status).toBe('created');

    // A 3DS payment: announced pending, then the acquirer times out (BYRD203). Its outcome is not
    // known until the recovery settles it, so the order is still a payment in progress.
    const timedOut = randomUUID();
    await h.publishTransaction('transaction.payment.pending', order, {
      transactionId: timedOut,
      status: 'Created',
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    await h.publishTransaction('transaction.payment.error', order, {
      transactionId: timedOut,
      status: 'TemporaryFailed',
      code: 'BYRD203',
    });
    const temporaryFailed = await events.waitFor(
      (e) => e.type === 'order.temporaryfailed' && (e.data as any).orderId === order.orderId,
    );
    expect(temporaryFailed.envelope.data).toMatchObject({ status: 'pending', transactionId: timedOut });
    const after = await h.waitForOrder(order.orderId, (o) =>
      o.transactions.some((t: any) => t.transactionId === timedOut && t.status === 'TemporaryFailed'),
    );
    expect(after.status).toBe('pending');
    expect(orderEvents(order.orderId)).toEqual(['order.created', 'order.pending', 'order.temporaryfailed']);
  });

  it('pre-auth → pending, capture → paid, partial refund keeps paid (order.partialrefunded), full refund → refunded', async () => {
    const { body: order } = await createOrder({ amount: '40.00' });
    const preauth = randomUUID();
    const capture = randomUUID();
    await h.publishTransaction('transaction.preauth.success', order, {
      transactionId: preauth,
      operationType: 'PreAuth',
      amount: '40.00',
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    await h.publishTransaction('transaction.capture.success', order, {
      transactionId: capture,
      operationType: 'Capture',
      amount: '40.00',
      sourceTransactionId: preauth,
    });
    const paid = await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(paid.paymentId).toBe(capture);

    await h.publishTransaction('transaction.refund.success', order, {
      transactionId: randomUUID(),
      operationType: 'Refund',
      amount: '15.00',
    });
    const partly = await h.waitForOrder(order.orderId, (o) => o.refundedAmount === '15.00');
    expect(partly.status).toBe('paid');

    await h.publishTransaction('transaction.refund.success', order, {
      transactionId: randomUUID(),
      operationType: 'Refund',
      amount: '25.00',
    });
    const refunded = await h.waitForOrder(order.orderId, (o) => o.status === 'refunded');
    expect(refunded.refundedAmount).toBe('40.00');
    await events.waitFor((e) => e.type === 'order.refunded' && (e.data as any).orderId === order.orderId);
    expect(orderEvents(order.orderId)).toEqual([
      'order.created',
      'order.pending',
      'order.paid',
      'order.partialrefunded', // the 15.00 refund left the order paid
      'order.refunded',
    ]);
  });

  it('expires an unpaid order after expiresAt and announces order.expired; a paid one never expires', async () => {
    const { body: unpaid } = await createOrder({ expiresIn: 2 });
    // Paid before it is due, then past its expiry: due at once (600 ms here), the sweep could expire
    // it before its payment's event is applied.
    const { body: paidOrder } = await createOrder();
    await h.publishTransaction('transaction.payment.success', paidOrder, { transactionId: randomUUID() });
    await h.waitForOrder(paidOrder.orderId, (o) => o.status === 'paid');
    await age(paidOrder.orderId);

    const expired = await h.waitForOrder(unpaid.orderId, (o) => o.status === 'expired');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expired.expiresAt));
    await events.waitFor((e) => e.type === 'order.expired' && (e.data as any).orderId === unpaid.orderId);
    await h.app.get(ExpireOrders).execute(); // a sweep surely past the paid order's expiry
    await new Promise((r) => setTimeout(r, 300));
    expect((await h.request('GET', `/api/v2/orders/${paidOrder.orderId}`)).body.status).toBe('paid');
  });

  describe('hosted form RPC', () => {
    it('rpc.orders.get returns the summary only to the holder of the checkout key', async () => {
      const rpc = h.app.get(Rpc);
      const { body: order } = await createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } });

      const summary = await rpc.call('rpc.orders.get', {
        orderId: order.orderId,
        checkoutKey: order.checkoutKey,
      });
      expect(summary).toMatchObject({
        orderId: order.orderId,
        merchantId: h.merchant.merchantId,
        merchantName: 'Acme Shop',
        status: 'created',
        amount: '25.00',
        currency: 'EUR',
        redirectUrl: 'https://shop.example.com/return',
        isPreAuth: true,
      });
      await expect(
        rpc.call('rpc.orders.get', { orderId: order.orderId, checkoutKey: randomUUID() }),
      ).rejects.toMatchObject({
        code: 'BYRD901',
      });
    });

    it('rpc.orders.cancel cancels an open order (order.canceled) and refuses a paid one', async () => {
      const rpc = h.app.get(Rpc);
      const { body: open } = await createOrder();
      const canceled = await rpc.call('rpc.orders.cancel', {
        orderId: open.orderId,
        checkoutKey: open.checkoutKey,
      });
      expect(canceled).toEqual({ orderId: open.orderId, status: 'canceled' });
      const read = await h.request('GET', `/api/v2/orders/${open.orderId}`);
      expect(read.body.status).toBe('canceled');
      expect(read.body.canceledAt).toBeTruthy();
      await events.waitFor((e) => e.type === 'order.canceled' && (e.data as any).orderId === open.orderId);

      const { body: paid } = await createOrder();
      await h.publishTransaction('transaction.payment.success', paid, { transactionId: randomUUID() });
      await h.waitForOrder(paid.orderId, (o) => o.status === 'paid');
      await expect(
        rpc.call('rpc.orders.cancel', { orderId: paid.orderId, checkoutKey: paid.checkoutKey }),
      ).rejects.toMatchObject({
        kind: 'BusinessRule',
      });
    });
  });

  describe('who may read or cancel an order over NATS', () => {
    /** A request as any client of the broker can send it: unsigned, its answer in clear. */
    async function raw(subject: string, request: unknown): Promise<Record<string, any>> {
      const reply = await h.env.nats.nc.request(h.env.nats.subject(subject), JSON.stringify(request), {
        timeout: 5_000,
      });
      return reply.json();
    }

    it('refuses to cancel or read an order for a request that names its merchant, not its checkout key', async () => {
      const { body: order } = await createOrder();
      const byMerchant = { orderId: order.orderId, merchantId: h.merchant.merchantId };

      for (const subject of ['rpc.orders.cancel', 'rpc.orders.get', 'rpc.orders.getForMerchant']) {
        const reply = await raw(subject, byMerchant);
        expect([subject, reply]).toEqual([
          subject,
          { ok: false, error: expect.objectContaining({ code: 'BYRD403' }) },
        ]);
      }
      // A key that is not one is not a way round it.
      expect(await raw('rpc.orders.get', { ...byMerchant, checkoutKey: 'none' })).toMatchObject({
        ok: false,
        error: { code: 'BYRD901' },
      });
      await events.waitFor((e) => e.type === 'order.created' && (e.data as any).orderId === order.orderId);
      await new Promise((r) => setTimeout(r, 300));
      const read = await h.request('GET', `/api/v2/orders/${order.orderId}`);
      expect(read.body.status).toBe('created');
      expect(read.body.canceledAt).toBeFalsy();
      expect(orderEvents(order.orderId)).toEqual(['order.created']);

      // Payments, signed, reads the merchant's order; another service may not.
      expect(await as('payments').call('rpc.orders.getForMerchant', byMerchant)).toMatchObject({
        orderId: order.orderId,
        status: 'created',
      });
      await expect(as('hosted-form-bff').call('rpc.orders.getForMerchant', byMerchant)).rejects.toMatchObject(
        {
          kind: 'Internal',
        },
      );
    });
  });

  describe('payment lock (rpc.orders.lockPayment / unlockPayment)', () => {
    const lockOf = (order: { orderId: string }, transactionId: string) => ({
      orderId: order.orderId,
      merchantId: h.merchant.merchantId,
      transactionId,
    });

    it('a lock and the expiry sweep racing at expiresAt, many rounds: the order ends locked or expired, never both', async () => {
      const payments = as('payments');
      const outcomes = { locked: 0, expired: 0 };
      for (let round = 0; round < 20; round++) {
        const { body: order } = await createOrder({ expiresIn: 1 }); // 300 ms here
        const expiresAt = Date.parse(order.expiresAt);
        // The sweep as it runs at the deadline, racing a lock taken just before it.
        const [lock] = await Promise.all([
          payments.call('rpc.orders.lockPayment', lockOf(order, randomUUID())).then(
            () => 'locked',
            (error: { code?: string }) => error.code,
          ),
          // The lock travels over NATS: the sweep starts 0-36 ms later, so either may come first.
          new Promise((resolve) => setTimeout(resolve, (round % 10) * 4)).then(() =>
            h.app.get(ExpireOrders).execute(new Date(expiresAt)),
          ),
        ]);
        await h.app.get(ExpireOrders).execute(new Date(expiresAt + 1_000));
        const { body } = await h.request('GET', `/api/v2/orders/${order.orderId}`);
        const summary = await payments.call('rpc.orders.getForMerchant', {
          orderId: order.orderId,
          merchantId: h.merchant.merchantId,
        });
        if (lock === 'locked') {
          expect([body.status, summary.paymentLocked]).toEqual(['created', true]);
          outcomes.locked++;
        } else {
          expect([lock, body.status, summary.paymentLocked]).toEqual(['BYRD205', 'expired', false]);
          outcomes.expired++;
        }
      }
      // Both sides won rounds: the two really raced.
      expect(outcomes.locked).toBeGreaterThan(0);
      expect(outcomes.expired).toBeGreaterThan(0);
    });

    it('holds an order for one attempt: others, cancel and expiry are refused until it fails', async () => {
      const payments = as('payments');
      // Locked before it is due (aged below): due at once, the sweep could expire it before the lock.
      const { body: order } = await createOrder();
      const [first, second] = [randomUUID(), randomUUID()];

      expect(await payments.call('rpc.orders.lockPayment', lockOf(order, first))).toEqual({
        orderId: order.orderId,
        lockedBy: first,
      });
      await age(order.orderId);
      // The same attempt again (a retry) is a no-op; another attempt is refused.
      expect(await payments.call('rpc.orders.lockPayment', lockOf(order, first))).toMatchObject({
        lockedBy: first,
      });
      await expect(payments.call('rpc.orders.lockPayment', lockOf(order, second))).rejects.toMatchObject({
        code: 'BYRD205',
      });
      await expect(
        h.app.get(Rpc).call('rpc.orders.cancel', { orderId: order.orderId, checkoutKey: order.checkoutKey }),
      ).rejects.toMatchObject({ code: 'BYRD205' });
      const summary = await h.app
        .get(Rpc)
        .call('rpc.orders.get', { orderId: order.orderId, checkoutKey: order.checkoutKey });
      expect(summary.paymentLocked).toBe(true);
      // Only the holder unlocks.
      expect(await payments.call('rpc.orders.unlockPayment', lockOf(order, second))).toMatchObject({
        lockedBy: first,
      });

      // Past its expiry, the sweep leaves an order alone while an attempt may be charging it...
      await h.app.get(ExpireOrders).execute();
      await new Promise((r) => setTimeout(r, 300));
      expect((await h.request('GET', `/api/v2/orders/${order.orderId}`)).body.status).toBe('created');
      // ...and the attempt's failure (its event) gives it back: then it expires, unpaid.
      await h.publishTransaction('transaction.payment.failed', order, {
        transactionId: first,
        status: 'Denied',
      });
      await h.waitForOrder(order.orderId, (o) => o.status === 'expired');
      await expect(payments.call('rpc.orders.lockPayment', lockOf(order, second))).rejects.toMatchObject({
        code: 'BYRD205',
        message: expect.stringMatching(/expired/),
      });
    });

    it("answers an unlock that waited for the attempt's own event to release the lock with the lock as it stands", async () => {
      const payments = as('payments');
      const { body: order } = await createOrder();
      const attempt = randomUUID();
      await payments.call('rpc.orders.lockPayment', lockOf(order, attempt));
      // The attempt's failure event is being applied: its transaction holds the row and lets the lock go.
      const consumer = h.app.get(DataSource).createQueryRunner();
      await consumer.connect();
      try {
        await consumer.startTransaction();
        await consumer.query(`SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, [order.orderId]);
        await consumer.query(
          `UPDATE orders SET payment_lock_id = NULL, payment_locked_at = NULL WHERE id = $1`,
          [order.orderId],
        );
        const unlock = payments.call('rpc.orders.unlockPayment', lockOf(order, attempt));
        // The unlock has read the order (still locked) and now waits for the row.
        const waiting = () =>
          consumer.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          ) as Promise<{ n: number }[]>;
        for (let tries = 0; (await waiting())[0].n === 0 && tries < 100; tries++)
          await new Promise((r) => setTimeout(r, 50));
        await consumer.commitTransaction();
        expect(await unlock).toEqual({ orderId: order.orderId, lockedBy: null });
      } finally {
        await consumer.release();
      }
    });

    it('a successful attempt keeps the lock; a released pre-authorisation gives it back', async () => {
      const payments = as('payments');
      const { body: order } = await createOrder();
      const preAuth = randomUUID();
      await payments.call('rpc.orders.lockPayment', lockOf(order, preAuth));
      await h.publishTransaction('transaction.preauth.success', order, {
        transactionId: preAuth,
        operationType: 'PreAuth',
      });
      await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
      await expect(
        payments.call('rpc.orders.lockPayment', lockOf(order, randomUUID())),
      ).rejects.toMatchObject({
        code: 'BYRD205',
      });

      await h.publishTransaction('transaction.preauth.canceled', order, {
        transactionId: randomUUID(),
        operationType: 'Release',
        sourceTransactionId: preAuth,
      });
      await h.waitForOrder(order.orderId, (o) => o.status === 'created');
      const next = randomUUID();
      expect(await payments.call('rpc.orders.lockPayment', lockOf(order, next))).toMatchObject({
        lockedBy: next,
      });
    });

    it('one attempt asking for the lock ten times at once (retried RPCs) holds it once', async () => {
      // A repeatable RPC is asked again when a try gets no answer, so a late first try and its
      // retry can reach two replicas together: both must answer that this attempt holds the order.
      const payments = as('payments');
      const { body: order } = await createOrder();
      const attempt = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => payments.call('rpc.orders.lockPayment', lockOf(order, attempt))),
      );
      expect(answers).toEqual(
        Array.from({ length: 10 }, () => ({ orderId: order.orderId, lockedBy: attempt })),
      );
      await expect(
        payments.call('rpc.orders.lockPayment', lockOf(order, randomUUID())),
      ).rejects.toMatchObject({ code: 'BYRD205' });
    });

    it('refuses a lock for an attempt that has already ended: the order stays payable', async () => {
      // A replica paused (a long GC pause, a frozen VM) wakes up and handles a lock request whose
      // caller gave up long ago: payments recorded the attempt as Error, and orders applied its
      // event, while the request waited. Taking the lock now would hold the order for good: nothing
      // else would announce that attempt's end again, and the expiry sweep skips locked orders.
      const payments = as('payments');
      const { body: order } = await createOrder();
      const gaveUp = randomUUID();
      await h.publishTransaction('transaction.payment.failed', order, {
        transactionId: gaveUp,
        status: 'Error',
      });
      await h.waitForOrder(order.orderId, (o) =>
        o.transactions.some((t: { transactionId: string }) => t.transactionId === gaveUp),
      );

      await expect(payments.call('rpc.orders.lockPayment', lockOf(order, gaveUp))).rejects.toMatchObject({
        code: 'BYRD205',
        message: expect.stringMatching(/already ended/),
      });
      const summary = await h.app
        .get(Rpc)
        .call('rpc.orders.get', { orderId: order.orderId, checkoutKey: order.checkoutKey });
      expect(summary.paymentLocked).toBe(false);
      const next = randomUUID();
      expect(await payments.call('rpc.orders.lockPayment', lockOf(order, next))).toMatchObject({
        lockedBy: next,
      });
    });

    it('answers only payments: the lock decides whether an order can be charged twice', async () => {
      const { body: order } = await createOrder();
      // Refused for the caller's own identity: a 500 to that caller, orders' reason in its cause.
      const refused = (subject: string, caller: string) => ({
        kind: 'Internal',
        cause: new Error(`${subject} refused this service: ${caller} may not call ${subject}`),
      });
      await expect(
        as('hosted-form-bff').call('rpc.orders.lockPayment', lockOf(order, randomUUID())),
      ).rejects.toMatchObject(refused('rpc.orders.lockPayment', 'hosted-form-bff'));
      await expect(
        h.app.get(Rpc).call('rpc.orders.unlockPayment', lockOf(order, randomUUID())),
      ).rejects.toMatchObject(refused('rpc.orders.unlockPayment', 'orders'));
    });

    it('refuses a lock or unlock that names no attempt, as an HTTP body naming none is refused', async () => {
      const { body: order } = await createOrder();
      const payments = as('payments');
      for (const transactionId of [null, '', 'not-a-guid', 42]) {
        for (const subject of ['rpc.orders.lockPayment', 'rpc.orders.unlockPayment'] as const) {
          await expect(
            payments.call(subject, { ...lockOf(order, randomUUID()), transactionId } as never),
          ).rejects.toMatchObject({ kind: 'InvalidInput', code: 'BYRD900' });
        }
      }
      // Nothing holds the order: it is payable as before.
      const read = await h.request('GET', `/api/v2/orders/${order.orderId}`);
      expect(read.body.status).toBe('created');
      await expect(
        payments.call('rpc.orders.lockPayment', lockOf(order, randomUUID())),
      ).resolves.toMatchObject({
        orderId: order.orderId,
      });
    });
  });
});
