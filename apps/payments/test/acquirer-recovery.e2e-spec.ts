import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import {
  freePort,
  futureExpiry,
  startServiceProcess,
  type EventCollector,
  type ServiceProcess,
} from '@byrd/platform/testing';
import { ACQUIRER, type Acquirer } from '../src/acquirer/acquirer.js';
import { markInFlight, PaymentAuthorizer } from '../src/payments/payment-authorizer.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsHarness } from './harness.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');
const FRICTIONLESS = '5448280000000007';
const TIMEOUT_CARD = '5201282999005515';
const CHALLENGE = '5555341244441115';
/**
 * The wait of every recovery here (seven tests). Above ACQUIRER_TIMEOUT_MS (2 s), and long enough
 * that a kill test's retry (once the 1 s idempotency lease of the killed request ran out, ~1.2 s
 * after it was sent) still finds the payment in flight before the recovery settles it.
 */
const RECOVERY_AFTER_MS = 3_000;

/**
 * Issue 13, write-ahead: a payment's row is committed in flight before the acquirer is asked, and
 * whatever cuts the call off (kill -9, timeout, a request that never arrived) is settled by the
 * recovery from what the acquirer itself recorded, with the usual events and no second charge.
 */
describe('acquirer calls cut off are recovered', () => {
  let h: PaymentsHarness;
  let db: DataSource;
  let events: EventCollector;
  let replica: ServiceProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run "npx turbo run build --filter=@byrd/payments" first`);
    h = await PaymentsHarness.start({
      ACQUIRER_TIMEOUT_MS: '2000',
      ACQUIRER_RECOVERY_AFTER_MS: String(RECOVERY_AFTER_MS),
      ACQUIRER_RECOVERY_SWEEP_MS: '200',
      IDEMPOTENCY_LEASE_MS: '1000',
    });
    db = h.payments.get(DataSource);
    events = await h.env.collect('transaction.>');
  });
  afterAll(async () => {
    replica?.child.kill('SIGKILL');
    await h?.stop();
  });

  const ofTransaction = (type: string, transactionId: string) =>
    events
      .ofType(type)
      .filter((e) => (e.envelope.data as { transactionId: string }).transactionId === transactionId);

  async function row(transactionId: string) {
    const [found] = await db.query(
      `SELECT status, code, acquirer_pending_since, captured_iso_amount FROM transactions WHERE id = $1`,
      [transactionId],
    );
    return found as { status: string; code: string; acquirer_pending_since: Date | null } | undefined;
  }

  /** A second payments replica, a real process (to kill), whose acquirer answers only after 30 s. */
  async function startSlowReplica(extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const vars = await h.env.serviceEnv('payments', {
      HTTP_PORT: String(await freePort()),
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
      SANDBOX_ACQUIRER_DELAY_MS: '30000',
      ACQUIRER_TIMEOUT_MS: '60000',
      ACQUIRER_RECOVERY_AFTER_MS: '120000',
      LOG_LEVEL: 'warn',
      ...extra,
    });
    return startServiceProcess(MAIN, vars);
  }

  async function waitFor<T>(
    what: string,
    probe: () => Promise<T | undefined | null | false>,
    timeoutMs = 20_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits until the acquirer's ledger holds a Success for a transaction matching `where` ($1). */
  const acquirerSucceeded = (what: string, where: string, value: string) =>
    waitFor(what, () =>
      db
        .query<{ reference: string }[]>(
          `SELECT l.reference FROM sandbox_acquirer_ledger l JOIN transactions t ON t.id = l.reference
            WHERE ${where} AND l.outcome = 'Success'`,
          [value],
        )
        .then((rows) => rows.length > 0 && rows),
    );

  /** kill -9 of the slow replica; waits for the request it cut off to end. */
  async function killReplica(cutOff: Promise<unknown>): Promise<void> {
    replica!.child.kill('SIGKILL');
    await replica!.exited();
    replica = undefined;
    await cutOff;
  }

  it('kill -9 between the acquirer’s answer and the commit: recovered once, never charged twice', async () => {
    replica = await startSlowReplica();
    const { body: order } = await h.createOrder();
    const cutOff = h
      .call(replica.url, 'POST', '/api/v2/payment', {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.orderId,
        card: { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123' },
      })
      .catch((error: unknown) => error);

    // The acquirer has authorised (its ledger says so) and our row is in flight: now the process dies.
    const [authorised] = await acquirerSucceeded(
      'the acquirer to authorise',
      't.order_id = $1',
      order.orderId,
    );
    const transactionId = authorised.reference;
    expect(await row(transactionId)).toMatchObject({ status: 'Processing', code: 'BYRD201' });
    expect((await row(transactionId))!.acquirer_pending_since).not.toBeNull();
    await killReplica(cutOff);

    // The merchant retries on the surviving replica: the order is held by the cut-off attempt.
    const retry = await h.pay(FRICTIONLESS, { orderId: order.orderId });
    expect(retry.status).toBe(422);
    expect(retry.body.code).toBe('BYRD205');

    const recovered = await waitFor('the recovery', async () => {
      const found = await row(transactionId);
      return found?.acquirer_pending_since === null && found;
    });
    expect(recovered).toMatchObject({ status: 'Success', code: 'BYRD200' });
    const paid = await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(paid.paymentId).toBe(transactionId);
    await new Promise((r) => setTimeout(r, 300));
    expect(ofTransaction('transaction.payment.success', transactionId)).toHaveLength(1);
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger l JOIN transactions t ON t.id = l.reference
        WHERE t.order_id = $1 AND l.outcome = 'Success'`,
      [order.orderId],
    );
    expect(n).toBe(1);
  });

  it('kill -9 with a payment of no order in flight: the retry with its idempotency-key answers that payment, never a second charge', async () => {
    replica = await startSlowReplica({ IDEMPOTENCY_LEASE_MS: '1000' });
    const key = `retry-${randomUUID()}`;
    const orderRef = `no-order-${randomUUID().slice(0, 8)}`;
    const payment = {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderRef,
      card: { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123' },
    };
    const cutOff = h
      .call(replica.url, 'POST', '/api/v2/payment', payment, { 'idempotency-key': key })
      .catch((error: unknown) => error);
    const [authorised] = await acquirerSucceeded('the acquirer to authorise', 't.order_ref = $1', orderRef);
    await killReplica(cutOff);

    // The merchant retries with the same key on the surviving replica: once the dead request's lease
    // ran out, it is answered with the payment that request started, still being settled.
    const retried = await waitFor('the key to be free again', async () => {
      const answer = await h.request('POST', '/api/v2/payment', payment, { 'idempotency-key': key });
      return answer.status !== 409 && answer;
    });
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({ transactionId: authorised.reference, code: 'BYRD201' });

    const recovered = await waitFor('the recovery', async () => {
      const found = await row(authorised.reference);
      return found?.acquirer_pending_since === null && found;
    });
    expect(recovered).toMatchObject({ status: 'Success', code: 'BYRD200' });
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM transactions WHERE order_ref = $1`,
      [orderRef],
    );
    expect(n).toBe(1);
  });

  it('kill -9 with a two-step payment\u2019s /pay in flight: the retry with its idempotency-key answers that payment, never 422 or a second charge', async () => {
    replica = await startSlowReplica({ IDEMPOTENCY_LEASE_MS: '1000' });
    const { body: order } = await h.createOrder();
    const created = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: order.orderId,
    });
    expect(created.body).toMatchObject({ status: 'Created', code: 'BYRD010' });
    const transactionId: string = created.body.transactionId;
    const key = `pay-${randomUUID()}`;
    const card = { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123' };
    const cutOff = h
      .call(replica.url, 'POST', `/api/v2/payment/${transactionId}/pay`, { card }, { 'idempotency-key': key })
      .catch((error: unknown) => error);
    await acquirerSucceeded('the acquirer to authorise', 't.id = $1', transactionId);
    await killReplica(cutOff);

    // Once the dead request's lease ran out, its retry is answered with the payment as it stands
    // (in flight, the order held by it), not refused as "not waiting for a card".
    const retried = await waitFor('the key to be free again', async () => {
      const answer = await h.request(
        'POST',
        `/api/v2/payment/${transactionId}/pay`,
        { card },
        {
          'idempotency-key': key,
        },
      );
      return answer.status !== 409 && answer;
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ transactionId, code: 'BYRD201' });
    // Its answer lost again, the same key with another card is another request: refused.
    await h.loseAnswer(key);
    const other = await h.request(
      'POST',
      `/api/v2/payment/${transactionId}/pay`,
      { card: { ...card, number: '4242424242424242' } },
      { 'idempotency-key': key },
    );
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 422, code: 'BYRD900' });
    // Without the key, a second /pay is refused as before.
    const unkeyed = await h.request('POST', `/api/v2/payment/${transactionId}/pay`, { card });
    expect(unkeyed.status).toBe(422);

    const recovered = await waitFor('the recovery', async () => {
      const found = await row(transactionId);
      return found?.acquirer_pending_since === null && found;
    });
    expect(recovered).toMatchObject({ status: 'Success', code: 'BYRD200' });
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger WHERE reference = $1 AND outcome = 'Success'`,
      [transactionId],
    );
    expect(n).toBe(1);
  });

  it('a retry whose first answer was lost while a 3DS challenge waits gets that payment with its action.url again', async () => {
    const key = `challenge-${randomUUID()}`;
    const orderRef = `challenge-${randomUUID().slice(0, 8)}`;
    const first = await h.pay(CHALLENGE, { orderRef }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ code: 'BYRD207', status: 'Created' });
    // What a process killed after the commit leaves: the payment, but no stored answer for the key.
    await h.loseAnswer(key);

    const retried = await h.pay(CHALLENGE, { orderRef }, { 'idempotency-key': key });
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({
      transactionId: first.body.transactionId,
      code: 'BYRD207',
      action: { type: 'redirect', url: first.body.action.url },
      threeDSecure: { id: first.body.threeDSecure.id },
    });
    // Its answer lost again, the key with another card or amount is another request: refused.
    for (const [card, overrides] of [
      ['4242424242424242', {}],
      [CHALLENGE, { amount: '30.00' }],
    ] as const) {
      await h.loseAnswer(key);
      const other = await h.pay(card, { orderRef, ...overrides }, { 'idempotency-key': key });
      expect({ status: other.status, code: other.body.code }).toEqual({ status: 422, code: 'BYRD900' });
    }
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM transactions WHERE order_ref = $1`,
      [orderRef],
    );
    expect(n).toBe(1);
  });

  it('a timeout (outcome unknown) holds the order, then is settled from what the acquirer recorded', async () => {
    const { body: order } = await h.createOrder();
    const timedOut = await h.pay(TIMEOUT_CARD, { orderId: order.orderId });
    expect(timedOut.status).toBe(201);
    expect(timedOut.body).toMatchObject({ status: 'TemporaryFailed', code: 'BYRD203' });
    const { transactionId } = timedOut.body;

    const retry = await h.pay(FRICTIONLESS, { orderId: order.orderId });
    expect(retry.status).toBe(422);

    await waitFor('the recovery', async () => (await row(transactionId))?.status === 'Success');
    const read = await h.request('GET', `/api/v2/transactions/${transactionId}`);
    expect(read.body).toMatchObject({ status: 'Success', code: 'BYRD200' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    expect(ofTransaction('transaction.payment.error', transactionId)).toHaveLength(1);
    await events.waitFor(
      (e) =>
        e.type.endsWith('transaction.payment.success') && (e.data as any).transactionId === transactionId,
    );
  });

  it('a refund that timed out is announced pending, never as an error; its paid order hears no order.temporaryfailed', async () => {
    // Told "error", a merchant would refund again under a new key: twice the money back.
    const orderEvents = await h.env.collect('order.>');
    try {
      const { body: order } = await h.createOrder({ amount: '100.00' });
      const paid = await h.pay(FRICTIONLESS, { amount: '100.00', orderId: order.orderId });
      expect(paid.body.status).toBe('Success');
      await h.waitForOrder(order.orderId, (o) => o.status === 'paid');

      const refund = await h.request('POST', `/api/v2/refund/${paid.body.transactionId}`, {
        amount: '30.01', // the sandbox times refunds of 30.01 out (the acquirer did refund)
      });
      expect(refund.body).toMatchObject({ status: 'TemporaryFailed', code: 'BYRD203' });
      const refundId: string = refund.body.transactionId;

      await events.waitFor(
        (e) => e.type === 'transaction.refund.success' && (e.data as any).transactionId === refundId,
        RECOVERY_AFTER_MS + 10_000,
      );
      expect(ofTransaction('transaction.refund.pending', refundId)).toHaveLength(1);
      expect(ofTransaction('transaction.refund.error', refundId)).toHaveLength(0);
      const ofOrder = (e: { envelope: { data: unknown } }) =>
        (e.envelope.data as { orderId?: string }).orderId === order.orderId;
      await orderEvents.waitFor(
        (e) => e.type === 'order.partialrefunded' && (e.data as any).orderId === order.orderId,
      );
      const types = orderEvents.events.filter(ofOrder).map((e) => e.envelope.type);
      expect(types).toContain('order.paid');
      expect(types).not.toContain('order.temporaryfailed');
    } finally {
      await orderEvents.stop();
    }
  });

  it('a request that never reached the acquirer is voided there, so it can never charge late', async () => {
    // What a crash right after the write-ahead commit leaves: a row in flight the acquirer never saw.
    const paid = await h.pay(FRICTIONLESS);
    const transactionId = randomUUID();
    await db.query(
      `INSERT INTO transactions
       SELECT (jsonb_populate_record(t, jsonb_build_object(
                 'id', $2::uuid, 'status', 'Processing', 'code', 'BYRD201',
                 'fingerprint', gen_random_uuid(),
                 'acquirer_pending_since', now() - interval '1 hour'))).*
         FROM transactions t WHERE t.id = $1`,
      [paid.body.transactionId, transactionId],
    );

    await waitFor('the recovery', async () => (await row(transactionId))?.acquirer_pending_since === null);
    expect(await row(transactionId)).toMatchObject({ status: 'Error', code: 'BYRD299' });
    await events.waitFor(
      (e) => e.type.endsWith('transaction.payment.error') && (e.data as any).transactionId === transactionId,
    );
    // The original request arriving now, late, is refused by the acquirer.
    const acquirer = h.payments.get<Acquirer>(ACQUIRER);
    const late = await acquirer.authorize({
      reference: transactionId,
      merchantMode: 'sandbox',
      operation: 'Payment',
      isoAmount: 2500,
      currency: 'EUR',
      card: { number: FRICTIONLESS, expiration: futureExpiry() },
    });
    expect(late.outcome).toBe('Denied');
  });

  it('orders not answering the order lock: 503, the attempt ends Error with nothing at the acquirer, and the retry with its idempotency-key is charged once', async () => {
    // Found by npm run chaos during a NATS outage: the attempt stayed in flight, the retry answered
    // it, and the recovery then voided it: an approved card ended Error for the merchant.
    const order = (await h.createOrder()).body as { orderId: string };
    const key = randomUUID();
    const payment = { orderId: order.orderId, orderRef: undefined };
    await h.ordersStopAnswering('rpc.orders.lockPayment');
    try {
      const refused = await h.pay(FRICTIONLESS, payment, { 'idempotency-key': key });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body).toMatchObject({
        code: 'BYRD999',
        message: expect.stringMatching(/retry the request$/),
      });
      const [attempt] = await db.query(
        `SELECT t.status, t.code, t.acquirer_pending_since,
                (SELECT count(*)::int FROM sandbox_acquirer_ledger l WHERE l.reference = t.id) AS at_acquirer
           FROM transactions t WHERE t.order_id = $1`,
        [order.orderId],
      );
      expect(attempt).toMatchObject({
        status: 'Error',
        code: 'BYRD299',
        acquirer_pending_since: null,
        at_acquirer: 0,
      });
    } finally {
      await h.restartOrders();
    }

    const retried = await h.pay(FRICTIONLESS, payment, { 'idempotency-key': key });
    expect(retried.status).toBe(201);
    expect(retried.body.status).toBe('Success');
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
    const charges = await db.query(`SELECT id FROM transactions WHERE order_id = $1 AND status = 'Success'`, [
      order.orderId,
    ]);
    expect(charges).toEqual([{ id: retried.body.transactionId }]);
  });

  it("a request stalled past the recovery, then refused by its order, leaves the recovery's outcome as it was (not refusedByOrder)", async () => {
    // Its replica paused between the write-ahead commit and the order's lock; meanwhile the recovery
    // ended its payment (Error) and another payment paid the order. The stalled request resumes.
    const order = (await h.createOrder()).body as { orderId: string };
    const paid = await h.pay(FRICTIONLESS, { orderId: order.orderId, orderRef: undefined });
    expect(paid.body.status).toBe('Success');
    const transactions = db.getRepository(Transaction);
    const stalled = transactions.create({
      ...(await transactions.findOneByOrFail({ id: paid.body.transactionId })),
      id: randomUUID(),
    });
    markInFlight(stalled);
    await transactions.save(stalled);
    await db.query(
      `UPDATE transactions SET status = 'Error', code = 'BYRD299', acquirer_pending_since = NULL WHERE id = $1`,
      [stalled.id],
    );

    const refusal = await h.payments
      .get(PaymentAuthorizer)
      .authorize(stalled, { card: { number: FRICTIONLESS, expiration: futureExpiry() } });
    expect(refusal?.code).toBe('BYRD205');
    const [after] = await db.query(`SELECT status, refused_by_order FROM transactions WHERE id = $1`, [
      stalled.id,
    ]);
    expect(after).toEqual({ status: 'Error', refused_by_order: false });
  });

  it('kill -9 with a capture in flight: the retry with its idempotency-key answers that capture, never a second one', async () => {
    const preAuth = await h.pay(FRICTIONLESS, { amount: '100.00', isPreAuth: true });
    expect(preAuth.body.status).toBe('Success');
    const preAuthId: string = preAuth.body.transactionId;
    replica = await startSlowReplica({ IDEMPOTENCY_LEASE_MS: '1000' });
    const key = `capture-${randomUUID()}`;
    const cutOff = h
      .call(
        replica.url,
        'POST',
        `/api/v2/capture/${preAuthId}`,
        { amount: '60.00' },
        { 'idempotency-key': key },
      )
      .catch((error: unknown) => error);
    // The acquirer has captured (its ledger says so) and our row is in flight: now the process dies.
    const [captured] = await acquirerSucceeded(
      'the acquirer to capture',
      "t.source_transaction_id = $1 AND t.operation_type = 'Capture'",
      preAuthId,
    );
    await killReplica(cutOff);

    // Once the dead request's lease ran out, the retry is answered with the capture it started: not
    // a second capture of 60.00 (which the 40.00 still held would refuse, 422).
    const retried = await waitFor('the key to be free again', async () => {
      const answer = await h.request(
        'POST',
        `/api/v2/capture/${preAuthId}`,
        { amount: '60.00' },
        { 'idempotency-key': key },
      );
      return answer.status !== 409 && answer;
    });
    expect(retried.status).toBe(200);
    expect(retried.body.transactionId).toBe(captured.reference);
    expect(['Processing', 'Success']).toContain(retried.body.status);

    await waitFor('the recovery', async () => (await row(captured.reference))?.status === 'Success');
    expect((await row(preAuthId)) as any).toMatchObject({ captured_iso_amount: '6000' });
    const captures = await db.query(
      `SELECT id FROM transactions WHERE source_transaction_id = $1 AND operation_type = 'Capture'`,
      [preAuthId],
    );
    expect(captures).toEqual([{ id: captured.reference }]);
  });

  it('a refund whose answer was lost: retries with its idempotency-key are answered with it, the money moves once', async () => {
    const payment = await h.pay(FRICTIONLESS, { amount: '100.00' });
    expect(payment.body.status).toBe('Success');
    const paymentId: string = payment.body.transactionId;
    const key = `refund-${randomUUID()}`;
    const refund = (body: Record<string, unknown>) =>
      h.request('POST', `/api/v2/refund/${paymentId}`, body, { 'idempotency-key': key });
    const first = await refund({ amount: '35.00' });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('Success');
    // What a process killed after the commit leaves: the refund, but no stored answer for the key.
    await h.loseAnswer(key);

    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        waitFor('an answer other than 409', async () => {
          const answer = await refund({ amount: '35.00' });
          return answer.status !== 409 && answer;
        }),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ transactionId: first.body.transactionId, status: 'Success' });
      expect(answer.body.sourceTransaction.isoRefundedAmount).toBe(3500);
    }
    const refunds = await db.query(
      `SELECT id FROM transactions WHERE source_transaction_id = $1 AND operation_type = 'Refund'`,
      [paymentId],
    );
    expect(refunds).toEqual([{ id: first.body.transactionId }]);
    const [{ refunded }] = await db.query<{ refunded: string }[]>(
      `SELECT refunded_iso_amount AS refunded FROM transactions WHERE id = $1`,
      [paymentId],
    );
    expect(refunded).toBe('3500');

    // The same key for another amount is refused, as the key's stored answer would have been.
    await h.loseAnswer(key);
    const other = await refund({ amount: '40.00' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('BYRD900');
  });

  it('a capture whose answer was lost keeps its amount reserved until the recovery records it', async () => {
    const preAuth = await h.pay(FRICTIONLESS, { amount: '100.00', isPreAuth: true });
    expect(preAuth.body.status).toBe('Success');
    const capture = await h.request('POST', `/api/v2/capture/${preAuth.body.transactionId}`, {
      amount: '20.01',
    });
    expect(capture.status).toBe(200);
    expect(capture.body).toMatchObject({ status: 'TemporaryFailed', code: 'BYRD203' });
    // Nobody may capture the same money while its fate is unknown.
    expect(capture.body.sourceTransaction.isoRemainingAmount).toBe(10000 - 2001);

    await waitFor('the recovery', async () => (await row(capture.body.transactionId))?.status === 'Success');
    expect((await row(preAuth.body.transactionId)) as any).toMatchObject({ captured_iso_amount: '2001' });
    await events.waitFor(
      (e) =>
        e.type.endsWith('transaction.capture.success') &&
        (e.data as any).transactionId === capture.body.transactionId,
    );
  });
});
