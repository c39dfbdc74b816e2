import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { Rpc } from '@byrd/platform';
import {
  authenticateWithSdk,
  freePort,
  futureExpiry,
  startServiceProcess,
  type EventCollector,
  type ServiceProcess,
} from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const FRICTIONLESS = '5448280000000007';
const CHALLENGE = '5555341244441115';
const ROUNDS = 5;
const here = path.dirname(fileURLToPath(import.meta.url));
const PAYMENTS_MAIN = path.resolve(here, '../dist/main.js');
const ORDERS_MAIN = path.resolve(here, '../../orders/dist/main.js');

/**
 * Issue 13: whatever mix of API payments, hosted-form payments, async methods and cancels hits one
 * order at once, on real HTTP and NATS, the order is charged at most once; a cancel that answered
 * success means no charge; the losers get a 4xx with a documented code, never a 5xx.
 */
describe('one charge per order', () => {
  let h: PaymentsHarness;
  let bff: Rpc;
  let db: DataSource;
  let events: EventCollector;
  const replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    h = await PaymentsHarness.start({}, { publicBaseIsSelf: true });
    bff = h.rpcAs('hosted-form-bff');
    db = h.payments.get(DataSource);
    events = await h.env.collect('transaction.>');
  });
  afterAll(async () => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await h?.stop();
  });

  const card = (number: string) => ({ number, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' });

  async function newOrder(overrides: Record<string, unknown> = {}) {
    const created = await h.createOrder(overrides);
    expect(created.status).toBe(201);
    return created.body as { orderId: string; checkoutKey: string };
  }

  /** An API payment of the order by a frictionless card. */
  const payment = (orderId: string) => ({
    type: 'card',
    amount: '25.00',
    currency: 'EUR',
    orderId,
    card: card(FRICTIONLESS),
  });

  /** What the acquirer authorised for the order: the sandbox's own ledger, not our records. */
  async function authorisedAtAcquirer(orderId: string): Promise<number> {
    const [row] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger l
         JOIN transactions t ON t.id = l.reference
        WHERE t.order_id = $1 AND l.outcome = 'Success' AND l.voided_at IS NULL
          AND t.operation_type IN ('Payment', 'PreAuth')`,
      [orderId],
    );
    return row.n;
  }

  async function successfulPayments(orderId: string) {
    return db.query<{ id: string; payment_method: string; refunded_iso_amount: string }[]>(
      `SELECT id, payment_method, refunded_iso_amount FROM transactions
        WHERE order_id = $1 AND status = 'Success' AND operation_type IN ('Payment', 'PreAuth')`,
      [orderId],
    );
  }

  /** Settles a call into status and body, whether it answered over HTTP or as an RPC error. */
  async function outcome(call: Promise<unknown>): Promise<{ status: number; body: any }> {
    try {
      const answer = (await call) as { status?: number; body?: unknown };
      return answer && typeof answer.status === 'number'
        ? { status: answer.status, body: answer.body }
        : { status: 200, body: answer };
    } catch (error) {
      const e = error as { code?: string; message?: string };
      return { status: e.code === 'BYRD205' ? 422 : 500, body: { code: e.code, message: e.message } };
    }
  }

  it('20 parallel API payments of one order: exactly one Success, the rest 422 BYRD205', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { orderId } = await newOrder();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => h.pay(FRICTIONLESS, { orderId, orderRef: undefined })),
      );
      const succeeded = answers.filter((a) => a.status === 201 && a.body.status === 'Success');
      expect(succeeded).toHaveLength(1);
      for (const loser of answers.filter((a) => a !== succeeded[0])) {
        expect(loser.status).toBe(422);
        expect(loser.body.code).toBe('BYRD205');
      }
      expect(await authorisedAtAcquirer(orderId)).toBe(1);
      const order = await h.waitForOrder(orderId, (o) => o.status === 'paid');
      expect(order.paymentId).toBe(succeeded[0].body.transactionId);
    }
  });

  // Two service processes started one after the other: each may take 20 s or more on a loaded CI
  // machine (startServiceProcess waits up to 45 s), so together past the 60 s default.
  it('holds across replicas: two of payments and two of orders, requests spread over both', async () => {
    const [paymentsPort, ordersPort] = [await freePort(), await freePort()];
    const common = { LOG_LEVEL: 'warn', PUBLIC_BASE_URL: h.paymentsUrl };
    const [payments, orders] = await Promise.all([
      h.env.serviceEnv('payments', { ...common, HTTP_PORT: String(paymentsPort) }),
      h.env.serviceEnv('orders', { ...common, HTTP_PORT: String(ordersPort) }),
    ]);
    replicas.push(await startServiceProcess(PAYMENTS_MAIN, payments));
    replicas.push(await startServiceProcess(ORDERS_MAIN, orders));
    const paymentsReplicas = [h.paymentsUrl, replicas[0].url];

    for (let round = 0; round < ROUNDS; round++) {
      const { orderId } = await newOrder();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          h.call(paymentsReplicas[i % 2], 'POST', '/api/v2/payment', {
            type: 'card',
            amount: '25.00',
            currency: 'EUR',
            orderId,
            card: card(FRICTIONLESS),
          }),
        ),
      );
      const succeeded = answers.filter((a) => a.status === 201 && a.body.status === 'Success');
      expect(succeeded).toHaveLength(1);
      expect(answers.filter((a) => a !== succeeded[0]).every((a) => a.status === 422)).toBe(true);
      expect(await authorisedAtAcquirer(orderId)).toBe(1);
    }
  }, 120_000);

  it('hosted-form and API payments racing the form’s cancel: a successful cancel means no charge', async () => {
    const seen = { canceled: 0, paid: 0 };
    for (let round = 0; round < ROUNDS * 2; round++) {
      const { orderId, checkoutKey } = await newOrder();
      const viaForm = () =>
        outcome(
          bff.call('rpc.payments.create', {
            orderId,
            checkoutKey,
            payment: { type: 'card', card: card(FRICTIONLESS) },
            saveCard: false,
          }),
        );
      const cancel = outcome(bff.call('rpc.orders.cancel', { orderId, checkoutKey }));
      const payments = await Promise.all([
        ...Array.from({ length: 6 }, viaForm),
        ...Array.from({ length: 4 }, () => h.pay(FRICTIONLESS, { orderId })),
      ]);
      const canceled = await cancel;
      for (const answer of [...payments, canceled]) expect(answer.status).toBeLessThan(500);

      const charged = await authorisedAtAcquirer(orderId);
      if (canceled.status === 200) {
        seen.canceled++;
        expect(canceled.body.status).toBe('canceled');
        expect(charged).toBe(0);
        expect(await successfulPayments(orderId)).toHaveLength(0);
        expect((await h.getOrder(orderId)).body.status).toBe('canceled');
      } else {
        seen.paid++;
        expect(canceled.body.code).toBe('BYRD205');
        expect(charged).toBe(1);
        expect(await successfulPayments(orderId)).toHaveLength(1);
        await h.waitForOrder(orderId, (o) => o.status === 'paid');
      }
    }
    // Both orders of events happened at least once, or the race was not exercised.
    expect(seen.canceled + seen.paid).toBe(ROUNDS * 2);
  });

  it('a cancel while a 3DS challenge is pending wins: the challenge then authorises nothing', async () => {
    const { orderId, checkoutKey } = await newOrder();
    const pending = await h.pay(CHALLENGE, { orderId });
    expect(pending.body.code).toBe('BYRD207');
    expect((await outcome(bff.call('rpc.orders.cancel', { orderId, checkoutKey }))).body.status).toBe(
      'canceled',
    );
    const completed = await authenticateWithSdk(h.paymentsUrl, pending.body.threeDSecure.id);
    expect(completed.status).toBe('Authorized'); // the shopper did authenticate...
    expect(completed.paymentStatus).not.toBe('Success'); // ...but the canceled order took no money
    const transaction = await h.request('GET', `/api/v2/transactions/${pending.body.transactionId}`);
    expect(transaction.body.status).not.toBe('Success');
    expect(await authorisedAtAcquirer(orderId)).toBe(0);
    expect((await h.getOrder(orderId)).body.status).toBe('canceled');
  });

  it('lets go of a lock its holder no longer needs when the order never heard the holder ended', async () => {
    // What a lost lock reply leaves (NATS away): orders committed the lock for an attempt that
    // payments then ended Error, and neither the unlock nor the attempt's event has reached orders.
    const { body: order } = await h.createOrder();
    const { body: attempt } = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: order.orderId,
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    await db.query(`UPDATE transactions SET status = 'Error', code = 'BYRD299' WHERE id = $1`, [
      attempt.transactionId,
    ]);
    await h.rpcAs('payments').call('rpc.orders.lockPayment', {
      orderId: order.orderId,
      merchantId: h.merchant.merchantId,
      transactionId: attempt.transactionId,
    });

    // The merchant's next try is charged, not refused (and its refusal kept under its key for a day).
    const paid = await h.pay(FRICTIONLESS, { orderId: order.orderId }, { 'idempotency-key': randomUUID() });
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('Success');
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it('a declined attempt gives the order back at once: the next one may pay it', async () => {
    const { orderId } = await newOrder();
    const declined = await h.pay('4000000000000002', { orderId });
    expect(declined.body.status).toBe('Denied');
    const paid = await h.pay(FRICTIONLESS, { orderId });
    expect(paid.status).toBe(201);
    expect(paid.body.status).toBe('Success');
  });

  it('a payment refused while a pre-authorisation holds the order is not kept under its key: the retry pays once it is released', async () => {
    const { orderId } = await newOrder();
    const held = await h.pay(FRICTIONLESS, { orderId, isPreAuth: true });
    expect(held.body).toMatchObject({ status: 'Success', isPreAuth: true });
    const key = { 'idempotency-key': `pay-${randomUUID()}` };
    const refused = await h.request('POST', '/api/v2/payment', payment(orderId), key);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('BYRD205');
    expect(refused.body.message).toContain(`pre-authorised by transaction ${held.body.transactionId}`);
    // Held until the merchant acts (days, perhaps): no time to try again, which a client would
    // honour by asking every few seconds meanwhile.
    expect(refused.headers.get('retry-after')).toBeNull();

    expect((await h.request('POST', `/api/v2/release/${held.body.transactionId}`, {})).body.status).toBe(
      'Success',
    );
    const retried = await h.request('POST', '/api/v2/payment', payment(orderId), key);
    expect(retried.status).toBe(201);
    expect(retried.body.status).toBe('Success');
    // From now on the key answers that payment.
    expect((await h.request('POST', '/api/v2/payment', payment(orderId), key)).body.transactionId).toBe(
      retried.body.transactionId,
    );
  });

  it('an attempt refused the lock another attempt took after its checks is not kept under its key: the retry pays once that one is declined', async () => {
    const { orderId } = await newOrder();
    // The other attempt: a two-step payment of the order, waiting for its card (no lock yet).
    const other = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId,
    });
    expect(other.body.status).toBe('Created');
    // This payment passes its checks while the order is free; the other attempt takes the order's
    // lock right before this one asks for it (as when both race past the checks).
    type Caller = { call(subject: string, request: object, timeoutMs?: number): Promise<unknown> };
    const rpc = h.payments.get<unknown, Caller>(Rpc);
    const call = rpc.call.bind(rpc);
    let interleaved = false;
    rpc.call = async (subject, request, timeoutMs) => {
      if (subject === 'rpc.orders.lockPayment' && !interleaved) {
        interleaved = true;
        await call(subject, { ...request, transactionId: other.body.transactionId });
      }
      return call(subject, request, timeoutMs);
    };
    const key = { 'idempotency-key': `pay-${randomUUID()}` };
    let refused;
    try {
      refused = await h.request('POST', '/api/v2/payment', payment(orderId), key);
    } finally {
      Reflect.deleteProperty(rpc, 'call'); // the prototype's again
    }
    expect(interleaved).toBe(true);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('BYRD205');

    // The other attempt's card is declined: the order is payable again, and so is this request.
    const declined = await h.request('POST', `/api/v2/payment/${other.body.transactionId}/pay`, {
      card: card('4000000000000002'),
    });
    expect(declined.body.status).toBe('Denied');
    const retried = await h.request('POST', '/api/v2/payment', payment(orderId), key);
    expect(retried.status).toBe(201);
    expect(retried.body.status).toBe('Success');
    expect(await authorisedAtAcquirer(orderId)).toBe(1);
    // It said so: a refusal that holds only while another attempt runs.
    expect(refused.headers.get('retry-after')).toBe('5');
  });

  it('voids an open Multibanco reference once the order is paid by card', async () => {
    const { orderId } = await newOrder();
    const reference = await h.payAsync('multibanco', { orderId });
    expect(reference.body.status).toBe('Processing');
    const paid = await h.pay(FRICTIONLESS, { orderId });
    expect(paid.body.status).toBe('Success');

    const voided = await events.waitFor(
      (e) =>
        e.type.endsWith('transaction.payment.canceled') &&
        (e.data as { transactionId: string }).transactionId === reference.body.transactionId,
    );
    expect(voided.envelope.paymentMethod).toBe('multibanco');
    // Paid anyway (the void had not reached the ATM): the money is recorded and refunded at once.
    const atm = await h.simulate(reference.body.transactionId, 'pay');
    expect(atm.status).toBe(200);
    const kept = (await successfulPayments(orderId)).filter((p) => Number(p.refunded_iso_amount) === 0);
    expect(kept.map((p) => p.payment_method)).toEqual(['card']);
  });

  it('refunds at once the money of a reference paid after its order was paid another way', async () => {
    const { orderId } = await newOrder();
    const reference = await h.payAsync('multibanco', { orderId });
    // Another attempt holds the order (its voiding of this reference has not happened yet).
    const holder = randomUUID();
    await h.rpcAs('payments').call('rpc.orders.lockPayment', {
      orderId,
      merchantId: h.merchant.merchantId,
      transactionId: holder,
    });

    const settled = await h.simulate(reference.body.transactionId, 'pay');
    expect(settled.status).toBe(200);
    expect(settled.body.status).toBe('Success');
    const refund = await events.waitFor(
      (e) =>
        e.type.endsWith('transaction.refund.success') &&
        (e.data as { sourceTransactionId: string }).sourceTransactionId === reference.body.transactionId,
    );
    expect(refund.envelope.data).toMatchObject({ orderId, isoAmount: 2500, operationType: 'Refund' });
    const [payment] = await successfulPayments(orderId);
    expect(Number(payment.refunded_iso_amount)).toBe(2500);
    // Neither the money nor its refund is the order's: it waits for the attempt holding it.
    const order = await h.waitForOrder(
      orderId,
      (o) =>
        o.transactions.length === 2 &&
        o.transactions.every((t: { status: string }) => t.status === 'Success'),
    );
    expect(order).toMatchObject({ status: 'created', isoRefundedAmount: 0, paymentId: null });
  });

  it('two async references of one order paid at once: the order keeps exactly one payment', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { orderId } = await newOrder();
      const first = await h.payAsync('multibanco', { orderId });
      const second = await h.payAsync('mbway', { orderId });
      const answers = await Promise.all([
        h.simulate(first.body.transactionId, 'pay'),
        h.simulate(second.body.transactionId, 'pay'),
      ]);
      for (const answer of answers) expect(answer.status).toBeLessThan(500);
      const kept = (await successfulPayments(orderId)).filter((p) => Number(p.refunded_iso_amount) === 0);
      expect(kept).toHaveLength(1);
      await h.waitForOrder(orderId, (o) => o.status === 'paid');
    }
  });

  it('one payment notified paid several times at once keeps its order locked by it', async () => {
    // A processor may send its notification again while the first is being handled: each takes the
    // order's lock for the same payment, and those that then find it settled must not give the lock
    // back (the order would take another charge until orders hears of the payment).
    const ordersDb = h.orders.get(DataSource);
    for (let round = 0; round < ROUNDS; round++) {
      const { orderId } = await newOrder();
      const created = await h.payAsync('mbway', { orderId });
      const paymentId = created.body.transactionId as string;
      const answers = await Promise.all(Array.from({ length: 6 }, () => h.simulate(paymentId, 'pay')));
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
      for (const answer of answers) expect(answer.status).toBeLessThan(500);
      const [order] = await ordersDb.query<{ payment_lock_id: string | null }[]>(
        'SELECT payment_lock_id FROM orders WHERE id = $1',
        [orderId],
      );
      expect(order.payment_lock_id).toBe(paymentId);
    }
  });

  it('takes pre-authorisation and methods from the order, never from a checkoutKey payment’s body', async () => {
    const { orderId, checkoutKey } = await newOrder();
    const asShopper = await h.request(
      'POST',
      `/api/v2/payment?checkoutKey=${checkoutKey}`,
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId,
        isPreAuth: true,
        card: card(FRICTIONLESS),
      },
      { 'x-api-key': '' },
    );
    expect(asShopper.status).toBe(400);
    expect(asShopper.body.errors).toEqual([expect.objectContaining({ field: 'isPreAuth' })]);
    expect(await successfulPayments(orderId)).toHaveLength(0);

    const preAuthOrder = await newOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } });
    const viaForm = await outcome(
      bff.call('rpc.payments.create', {
        orderId: preAuthOrder.orderId,
        checkoutKey: preAuthOrder.checkoutKey,
        payment: { type: 'card', card: card(FRICTIONLESS) },
        saveCard: false,
      }),
    );
    expect(viaForm.body.status).toBe('Success');
    const [held] = await db.query(`SELECT operation_type FROM transactions WHERE order_id = $1`, [
      preAuthOrder.orderId,
    ]);
    expect(held.operation_type).toBe('PreAuth');

    const multibancoOnly = await newOrder({ paymentOptions: { allowedPaymentMethods: ['multibanco'] } });
    const byCard = await h.request(
      'POST',
      `/api/v2/payment?checkoutKey=${multibancoOnly.checkoutKey}`,
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: multibancoOnly.orderId,
        card: card(FRICTIONLESS),
      },
      { 'x-api-key': '' },
    );
    expect(byCard.status).toBe(422);
    expect(byCard.body.code).toBe('BYRD292');
  });
});
