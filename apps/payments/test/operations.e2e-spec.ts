import { DataSource } from 'typeorm';
import type { EventCollector } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

/** Capture, refund and release with balances, state rules and concurrency. */
describe('operations', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  const preAuth = async (amount = '100.00', orderId?: string) => {
    const { body } = await h.pay('4242424242424242', {
      amount,
      isPreAuth: true,
      ...(orderId ? { orderId } : {}),
    });
    expect(body).toMatchObject({ status: 'Success', isPreAuth: true });
    return body.transactionId as string;
  };

  it('pre-auth → partial capture → partial refund → over-refund (BYRD231), with correct balances', async () => {
    const { body: order } = await h.createOrder({ amount: '100.00' });
    const id = await preAuth('100.00', order.orderId);
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');

    const capture = await h.request('POST', `/api/v2/capture/${id}`, { isoAmount: 6000 });
    expect(capture.status).toBe(200);
    expect(capture.body).toMatchObject({
      code: 'BYRD200',
      status: 'Success',
      amount: '60.00',
      isoAmount: 6000,
      sourceTransaction: {
        transactionId: id,
        amount: '100.00',
        capturedAmount: '60.00',
        remainingAmount: '40.00',
      },
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');

    const refund = await h.request('POST', `/api/v2/refund/${capture.body.transactionId}`, {
      amount: '35.00',
    });
    expect(refund.status).toBe(200);
    expect(refund.body).toMatchObject({
      code: 'BYRD200',
      amount: '35.00',
      sourceTransaction: {
        transactionId: capture.body.transactionId,
        refundedAmount: '35.00',
        remainingAmount: '25.00',
        isoRemainingAmount: 2500,
      },
    });

    const over = await h.request('POST', `/api/v2/refund/${capture.body.transactionId}`, { isoAmount: 3100 });
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({
      code: 'BYRD231',
      description: 'The refund amount exceeds the remaining balance of the original payment',
    });
    // The same money cannot be refunded again through the pre-auth either.
    expect((await h.request('POST', `/api/v2/refund/${id}`, { isoAmount: 3100 })).body.code).toBe('BYRD231');

    await events.waitFor(
      (e) =>
        e.type === 'transaction.refund.success' &&
        (e.data as any).sourceTransactionId === capture.body.transactionId,
    );
    expect((await h.request('GET', `/api/v2/transactions/${refund.body.transactionId}`)).body).toMatchObject({
      operationType: 'Refund',
      status: 'Success',
      sourceTransactionId: capture.body.transactionId,
    });
  });

  it('refunds a payment fully, then answers BYRD230; the order becomes refunded', async () => {
    const { body: order } = await h.createOrder({ amount: '50.00' });
    const { body: payment } = await h.pay('4242424242424242', { amount: '50.00', orderId: order.orderId });
    const full = await h.request('POST', `/api/v2/refund/${payment.transactionId}`, {});
    expect(full.body).toMatchObject({
      status: 'Success',
      amount: '50.00',
      sourceTransaction: { remainingAmount: '0.00' },
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'refunded');
    const again = await h.request('POST', `/api/v2/refund/${payment.transactionId}`, { isoAmount: 100 });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('BYRD230');
  });

  it('applies the sandbox amount rules to captures and refunds (a denied refund changes no balance)', async () => {
    const id = await preAuth('100.00');
    const denied = await h.request('POST', `/api/v2/capture/${id}`, { amount: '20.00' });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({
      code: 'BYRD205',
      status: 'Denied',
      sourceTransaction: { capturedAmount: '0.00', remainingAmount: '100.00' },
    });
    expect((await h.request('POST', `/api/v2/capture/${id}`, { amount: '20.01' })).body).toMatchObject({
      status: 'TemporaryFailed',
      code: 'BYRD203',
    });
    const captured = await h.request('POST', `/api/v2/capture/${id}`, { amount: '50.00' });
    expect(captured.body.status).toBe('Success');
    const refundDenied = await h.request('POST', `/api/v2/refund/${captured.body.transactionId}`, {
      amount: '30.00',
    });
    expect(refundDenied.body).toMatchObject({
      status: 'Denied',
      sourceTransaction: { refundedAmount: '0.00', remainingAmount: '50.00' },
    });
  });

  it('releases an uncaptured pre-auth, then refuses to capture or release it again', async () => {
    const { body: order } = await h.createOrder({ amount: '80.00' });
    const id = await preAuth('80.00', order.orderId);
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    const release = await h.request('POST', `/api/v2/release/${id}`, {});
    expect(release.status).toBe(200);
    expect(release.body).toMatchObject({
      code: 'BYRD200',
      amount: '80.00',
      sourceTransaction: { releasedAmount: '80.00', remainingAmount: '0.00' },
    });
    await events.waitFor(
      (e) => e.type === 'transaction.preauth.canceled' && (e.data as any).sourceTransactionId === id,
    );
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');

    expect((await h.request('POST', `/api/v2/capture/${id}`, { isoAmount: 100 })).status).toBe(422);
    expect((await h.request('POST', `/api/v2/release/${id}`, {})).status).toBe(422);
  });

  it('announces a partial release as the pre-auth still holding the rest; only the release of the rest cancels it', async () => {
    const { body: order } = await h.createOrder({ amount: '100.00' });
    const id = await preAuth('100.00', order.orderId);
    await h.waitForOrder(order.orderId, (o) => o.status === 'pending');
    const ofRelease = (releaseId: string) =>
      events.events
        .filter((e) => (e.envelope.data as any).transactionId === releaseId)
        .map((e) => e.envelope.type);

    const part = await h.request('POST', `/api/v2/release/${id}`, { amount: '40.00' });
    expect(part.body).toMatchObject({ status: 'Success', sourceTransaction: { remainingAmount: '60.00' } });
    await events.waitFor(
      (e) =>
        e.type === 'transaction.preauth.success' && (e.data as any).transactionId === part.body.transactionId,
    );
    expect(ofRelease(part.body.transactionId)).toEqual(['transaction.preauth.success']);
    // The order still holds 60.00 of the shopper's money and may capture it.
    expect((await h.getOrder(order.orderId)).body.status).toBe('pending');

    const rest = await h.request('POST', `/api/v2/release/${id}`, {});
    expect(rest.body).toMatchObject({ status: 'Success', amount: '60.00' });
    await events.waitFor(
      (e) =>
        e.type === 'transaction.preauth.canceled' &&
        (e.data as any).transactionId === rest.body.transactionId,
    );
    expect(ofRelease(rest.body.transactionId)).toEqual(['transaction.preauth.canceled']);
    await h.waitForOrder(order.orderId, (o) => o.status === 'created');
  });

  it('refuses: capture of a denied pre-auth, release after capture, capture beyond the hold, refund of a pre-auth never captured', async () => {
    const { body: deniedPreAuth } = await h.pay('4000000000000002', { isPreAuth: true });
    expect((await h.request('POST', `/api/v2/capture/${deniedPreAuth.transactionId}`, {})).status).toBe(422);

    const id = await preAuth('100.00');
    expect((await h.request('POST', `/api/v2/refund/${id}`, {})).status).toBe(422);
    expect((await h.request('POST', `/api/v2/capture/${id}`, { isoAmount: 10_001 })).status).toBe(422);
    expect((await h.request('POST', `/api/v2/capture/${id}`, { isoAmount: 5000 })).body.status).toBe(
      'Success',
    );
    const release = await h.request('POST', `/api/v2/release/${id}`, {});
    expect(release.status).toBe(422);
    expect(release.body.message).toMatch(/captured/);
  });

  it('serialises concurrent refunds so the balance never goes negative', async () => {
    const { body: payment } = await h.pay('4242424242424242', { amount: '100.00' });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        h.request('POST', `/api/v2/refund/${payment.transactionId}`, { amount: '40.00' }),
      ),
    );
    const succeeded = answers.filter((a) => a.status === 200 && a.body.status === 'Success');
    expect(succeeded).toHaveLength(2);
    expect(answers.filter((a) => a.status === 422).every((a) => a.body.code === 'BYRD231')).toBe(true);
    const remaining = succeeded.map((a) => a.body.sourceTransaction.isoRemainingAmount).sort((a, b) => a - b);
    expect(remaining).toEqual([2000, 6000]);
  });

  it('refuses an amount and an isoAmount that disagree (or an amount with too many decimals), moving no money', async () => {
    const { body: payment } = await h.pay('4242424242424242', { amount: '50.00' });
    const id = payment.transactionId as string;
    const operationsOn = async (...ids: string[]) =>
      (
        await h.payments
          .get(DataSource)
          .query(`SELECT id FROM transactions WHERE source_transaction_id = ANY ($1)`, [ids])
      ).length;

    for (const body of [{ amount: '40.00', isoAmount: 100 }, { amount: '1.001' }]) {
      const refused = await h.request('POST', `/api/v2/refund/${id}`, body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'BYRD900' });
      expect(JSON.stringify(refused.body)).toContain('amount');
    }
    const preAuthId = await preAuth('30.00');
    const capture = await h.request('POST', `/api/v2/capture/${preAuthId}`, {
      amount: '10.00',
      isoAmount: 2000,
    });
    expect(capture.status).toBe(400);
    expect(await operationsOn(id, preAuthId)).toBe(0);

    // Agreeing fields are one request, as either alone.
    const agreed = await h.request('POST', `/api/v2/refund/${id}`, { amount: '40.00', isoAmount: 4000 });
    expect(agreed.body).toMatchObject({ status: 'Success', isoAmount: 4000 });
  });

  it('moves only the amount asked for when it is spelt otherwise (IsoAmount, iso_amount), and refuses a null one', async () => {
    const { body: payment } = await h.pay('4242424242424242', { amount: '100.00' });
    // As a .NET client serialises its RefundPaymentRequest: without the alias, the whole 100.00 went back.
    const pascal = await h.request('POST', `/api/v2/refund/${payment.transactionId}`, {
      TransactionId: payment.transactionId,
      IsoAmount: 4000,
    });
    expect(pascal.body).toMatchObject({
      status: 'Success',
      isoAmount: 4000,
      sourceTransaction: { isoRefundedAmount: 4000, isoRemainingAmount: 6000 },
    });
    const snake = await h.request('POST', `/api/v2/refund/${payment.transactionId}`, { iso_amount: '3100' });
    expect(snake.body).toMatchObject({ isoAmount: 3100, sourceTransaction: { isoRemainingAmount: 2900 } });

    const preAuthId = await preAuth('50.00');
    for (const body of [{ isoAmount: null }, { amount: null }]) {
      const refused = await h.request('POST', `/api/v2/capture/${preAuthId}`, body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'BYRD900' });
    }
    const release = await h.request('POST', `/api/v2/release/${preAuthId}`, { Amount: '10.00' });
    expect(release.body).toMatchObject({ isoAmount: 1000, sourceTransaction: { isoRemainingAmount: 4000 } });
  });

  it('refuses a body of JSON null (400 BYRD900): never read as "no amount", which moves the whole remaining amount', async () => {
    const { body: payment } = await h.pay('4242424242424242', { amount: '100.00' });
    const preAuthId = await preAuth('50.00');
    for (const [operation, id] of [
      ['refund', payment.transactionId as string],
      ['capture', preAuthId],
      ['release', preAuthId],
    ]) {
      const refused = await h.request('POST', `/api/v2/${operation}/${id}`, null);
      expect({ operation, status: refused.status, code: refused.body.code }).toEqual({
        operation,
        status: 400,
        code: 'BYRD900',
      });
    }
    // Nothing moved: the whole of each is still there to refund and to capture.
    const refund = await h.request('POST', `/api/v2/refund/${payment.transactionId}`, { isoAmount: 10000 });
    expect(refund.body).toMatchObject({ status: 'Success', sourceTransaction: { isoRefundedAmount: 10000 } });
    const capture = await h.request('POST', `/api/v2/capture/${preAuthId}`, { isoAmount: 5000 });
    expect(capture.body).toMatchObject({
      status: 'Success',
      sourceTransaction: { isoCapturedAmount: 5000, isoRemainingAmount: 0 },
    });
  });

  it("answers 404 for another merchant's transaction", async () => {
    const id = await preAuth();
    const other = await h.env.createMerchant('Other');
    const answer = await h.request('POST', `/api/v2/capture/${id}`, {}, { 'x-api-key': other.apiKey });
    expect(answer.status).toBe(404);
    expect(
      (await h.request('GET', `/api/v2/transactions/${id}`, undefined, { 'x-api-key': other.apiKey })).status,
    ).toBe(404);
  });
});

/** Operations racing one another at a slow acquirer (every answer held for a while). */
describe('operations while another is at the acquirer', () => {
  let h: PaymentsHarness;
  let db: DataSource;

  beforeAll(async () => {
    h = await PaymentsHarness.start({ SANDBOX_ACQUIRER_DELAY_MS: '1500' });
    db = h.payments.get(DataSource);
  });
  afterAll(() => h?.stop());

  it('a release while a capture is at the acquirer is refused as retryable; once the capture is denied, the same key releases', async () => {
    const { body: preAuth } = await h.pay('4242424242424242', { amount: '100.00', isPreAuth: true });
    expect(preAuth.status).toBe('Success');
    const id = preAuth.transactionId as string;
    // The sandbox denies captures of 20.00 and below: this one will give its 15.00 back.
    const capture = h.request('POST', `/api/v2/capture/${id}`, { amount: '15.00' });
    for (;;) {
      const inFlight = await db.query(
        `SELECT 1 FROM transactions WHERE source_transaction_id = $1 AND acquirer_pending_since IS NOT NULL`,
        [id],
      );
      if (inFlight.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }

    const key = { 'idempotency-key': `release-${id}` };
    const refused = await h.request('POST', `/api/v2/release/${id}`, {}, key);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('BYRD205');
    expect(refused.headers.get('retry-after')).toBe('5');

    expect((await capture).body).toMatchObject({ status: 'Denied' });
    const released = await h.request('POST', `/api/v2/release/${id}`, {}, key);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ status: 'Success', amount: '100.00' });
  });
});
