import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { EventCollector } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('sandbox chargebacks over HTTP', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    events = await h.env.collect('chargeback.>');
  });
  afterAll(() => h?.stop());

  /** A successful card payment of a fresh order. */
  async function paidOrder() {
    const order = (await h.createOrder()).body;
    const payment = (await h.pay('5448280000000007', { orderId: order.orderId })).body;
    expect(payment.status).toBe('Success');
    return { orderId: order.orderId as string, transactionId: payment.transactionId as string };
  }

  const eventsOf = (chargebackId: string) =>
    events.events.filter((e) => (e.envelope.data as any).chargebackId === chargebackId);

  it('opens a chargeback on a paid order and takes it through its lifecycle, announcing every step in order', async () => {
    const { orderId, transactionId } = await paidOrder();
    const opened = await h.openChargeback({ transactionId, reason: '10.4 Fraud - Card Absent Environment' });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({
      transactionId,
      orderId,
      status: 'Created',
      amount: '25.00',
      isoAmount: 2500,
      currency: 'EUR',
      reason: '10.4 Fraud - Card Absent Environment',
      paymentMethod: 'card',
    });
    const { chargebackId } = opened.body;
    expect(chargebackId).toMatch(GUID);

    const steps = [
      ['disputing', 'Disputing'],
      ['pendingaction', 'PendingAction'],
      ['disputing', 'Disputing'],
      ['won', 'Won'],
      ['closed', 'Closed'],
    ];
    for (const [action, status] of steps) {
      const moved = await h.moveChargeback(chargebackId, action);
      expect([action, moved.status, moved.body.status]).toEqual([action, 200, status]);
    }
    expect((await h.request('GET', `/api/v2/sandbox/chargebacks/${chargebackId}`)).body).toMatchObject({
      chargebackId,
      status: 'Closed',
    });

    await events.waitFor(
      (e) => e.type === 'chargeback.closed' && (e.data as any).chargebackId === chargebackId,
    );
    const seen = eventsOf(chargebackId).map((e) => e.envelope);
    expect(seen.map((e) => e.type)).toEqual([
      'chargeback.created',
      'chargeback.disputing',
      'chargeback.pendingaction',
      'chargeback.disputing',
      'chargeback.won',
      'chargeback.closed',
    ]);
    const statuses = ['Created', 'Disputing', 'PendingAction', 'Disputing', 'Won', 'Closed'];
    seen.forEach((envelope, i) => {
      expect(envelope).toMatchObject({
        merchantId: h.merchant.merchantId,
        paymentMethod: 'card',
        referenceIds: [orderId, transactionId, chargebackId],
      });
      expect(envelope.data).toEqual({
        chargebackId,
        transactionId,
        orderId,
        status: statuses[i],
        amount: '25.00',
        currency: 'EUR',
        reason: '10.4 Fraud - Card Absent Environment',
      });
    });
  });

  it('refuses an illegal move with 422, leaving the chargeback and the stream as they were', async () => {
    const { transactionId } = await paidOrder();
    const { chargebackId } = (await h.openChargeback({ transactionId })).body;

    const wonWithoutDispute = await h.moveChargeback(chargebackId, 'won');
    expect(wonWithoutDispute.status).toBe(422);
    expect(wonWithoutDispute.body.message).toContain('Disputing, PendingAction, Lost, Closed');

    expect((await h.moveChargeback(chargebackId, 'lost')).status).toBe(200);
    expect((await h.moveChargeback(chargebackId, 'disputing')).status).toBe(422);
    expect((await h.moveChargeback(chargebackId, 'closed')).status).toBe(200);
    const reopened = await h.moveChargeback(chargebackId, 'disputing');
    expect(reopened.status).toBe(422);
    expect(reopened.body.message).toContain('final');
    expect((await h.moveChargeback(chargebackId, 'closed')).status).toBe(422);
    expect((await h.moveChargeback(chargebackId, 'appeal')).status).toBe(404);

    expect((await h.request('GET', `/api/v2/sandbox/chargebacks/${chargebackId}`)).body.status).toBe(
      'Closed',
    );
    await events.waitFor(
      (e) => e.type === 'chargeback.closed' && (e.data as any).chargebackId === chargebackId,
    );
    await new Promise((r) => setTimeout(r, 200)); // room for a stray event to arrive
    expect(eventsOf(chargebackId).map((e) => e.envelope.type)).toEqual([
      'chargeback.created',
      'chargeback.lost',
      'chargeback.closed',
    ]);
  });

  it('answers a retry whose first answer was lost with the chargeback as it stands: opened once, moved once', async () => {
    const db = h.payments.get(DataSource);
    const { transactionId } = await paidOrder();
    const openKey = randomUUID();
    const opened = await h.openChargeback({ transactionId, amount: '10.00' }, { 'idempotency-key': openKey });
    expect(opened.status).toBe(201);
    await h.loseAnswer(openKey);
    const reopened = await h.openChargeback(
      { transactionId, amount: '10.00' },
      { 'idempotency-key': openKey },
    );
    expect(reopened.status).toBe(201);
    expect(reopened.body).toMatchObject({ chargebackId: opened.body.chargebackId, isoAmount: 1000 });
    await h.loseAnswer(openKey);
    const otherAmount = await h.openChargeback(
      { transactionId, amount: '5.00' },
      { 'idempotency-key': openKey },
    );
    expect({ status: otherAmount.status, code: otherAmount.body.code }).toEqual({
      status: 422,
      code: 'BYRD900',
    });

    const { chargebackId } = opened.body;
    const moveKey = randomUUID();
    expect((await h.moveChargeback(chargebackId, 'disputing', { 'idempotency-key': moveKey })).status).toBe(
      200,
    );
    await h.loseAnswer(moveKey);
    const moved = await h.moveChargeback(chargebackId, 'disputing', { 'idempotency-key': moveKey });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ chargebackId, status: 'Disputing' });
    // Without that key, a second move to where it is stays an illegal move.
    expect((await h.moveChargeback(chargebackId, 'disputing')).status).toBe(422);

    expect(await db.query(`SELECT id FROM chargebacks WHERE transaction_id = $1`, [transactionId])).toEqual([
      { id: chargebackId },
    ]);
    await events.waitFor(
      (e) => e.type === 'chargeback.disputing' && (e.data as any).chargebackId === chargebackId,
    );
    await new Promise((r) => setTimeout(r, 200)); // room for a stray event to arrive
    expect(eventsOf(chargebackId).map((e) => e.envelope.type)).toEqual([
      'chargeback.created',
      'chargeback.disputing',
    ]);
  });

  it('disputes partial amounts up to what is not already disputed; a won chargeback frees its amount', async () => {
    const { transactionId } = await paidOrder();
    const first = await h.openChargeback({ transactionId, amount: '10.00' });
    expect(first.body).toMatchObject({ status: 'Created', amount: '10.00', isoAmount: 1000 });

    const tooMuch = await h.openChargeback({ transactionId, isoAmount: 1501 });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.message).toContain('15.00 EUR');

    const rest = await h.openChargeback({ transactionId });
    expect(rest.body).toMatchObject({ amount: '15.00', isoAmount: 1500 });
    expect((await h.openChargeback({ transactionId })).status).toBe(422);

    await h.moveChargeback(first.body.chargebackId, 'disputing');
    await h.moveChargeback(first.body.chargebackId, 'won');
    await h.moveChargeback(first.body.chargebackId, 'closed');
    const again = await h.openChargeback({ transactionId });
    expect(again.status).toBe(201);
    expect(again.body.amount).toBe('10.00');
  });

  it('never refunds money a chargeback holds: open or lost chargebacks reduce what can be refunded', async () => {
    // Sandbox refunds succeed from 31.00 EUR.
    const payment = (await h.pay('5448280000000007', { amount: '150.00' })).body;
    const refund = (transactionId: string, isoAmount?: number) =>
      h.request('POST', `/api/v2/refund/${transactionId}`, isoAmount === undefined ? {} : { isoAmount });
    const disputed = await h.openChargeback({ transactionId: payment.transactionId, amount: '50.00' });

    // While the dispute is open only the undisputed 100.00 can be refunded.
    const tooMuch = await refund(payment.transactionId, 10_100);
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.code).toBe('BYRD231');
    expect((await refund(payment.transactionId, 4_000)).body).toMatchObject({
      status: 'Success',
      isoAmount: 4_000,
    });

    // Lost: the 50.00 went back to the cardholder; 60.00 is left, and then nothing.
    await h.moveChargeback(disputed.body.chargebackId, 'lost');
    expect((await refund(payment.transactionId, 6_100)).body.code).toBe('BYRD231');
    expect((await refund(payment.transactionId)).body).toMatchObject({ status: 'Success', isoAmount: 6_000 });
    const nothing = await refund(payment.transactionId, 3_100);
    expect(nothing.status).toBe(422);
    expect(nothing.body.code).toBe('BYRD230');
    expect(nothing.body.message).toContain('charged back');

    // A won dispute leaves the money with the merchant, who may then refund it.
    const other = (await h.pay('5448280000000007', { amount: '40.00' })).body;
    const won = await h.openChargeback({ transactionId: other.transactionId });
    expect((await refund(other.transactionId)).body.code).toBe('BYRD230');
    await h.moveChargeback(won.body.chargebackId, 'disputing');
    await h.moveChargeback(won.body.chargebackId, 'won');
    expect((await refund(other.transactionId)).body).toMatchObject({ status: 'Success', isoAmount: 4_000 });
  });

  it('serialises a refund of a pre-authorisation and a chargeback on its capture: the money goes once', async () => {
    for (let round = 0; round < 5; round++) {
      const preAuth = (await h.pay('5448280000000007', { amount: '100.00', isPreAuth: true })).body;
      const capture = await h.request('POST', `/api/v2/capture/${preAuth.transactionId}`, {});
      expect(capture.body).toMatchObject({ status: 'Success', isoAmount: 10_000 });
      const [refund, chargeback] = await Promise.all([
        h.request('POST', `/api/v2/refund/${preAuth.transactionId}`, { isoAmount: 10_000 }),
        h.openChargeback({ transactionId: capture.body.transactionId, isoAmount: 10_000 }),
      ]);
      // Exactly one took the money (refund 200, chargeback 201); whichever came second found nothing left.
      const tookIt = [refund.status === 200, chargeback.status === 201].filter(Boolean);
      expect(tookIt).toHaveLength(1);
      expect([refund.status, chargeback.status]).toContain(422);
    }
  });

  it('charges back only successful payments or captures (422 otherwise)', async () => {
    const denied = (await h.pay('4000000000000002')).body;
    expect(denied.status).toBe('Denied');
    const onDenied = await h.openChargeback({ transactionId: denied.transactionId });
    expect(onDenied.status).toBe(422);
    expect(onDenied.body.message).toContain('Denied');

    const pendingMultibanco = (await h.payAsync('multibanco')).body;
    expect((await h.openChargeback({ transactionId: pendingMultibanco.transactionId })).status).toBe(422);

    // Once the shopper paid the reference, it is money the scheme can claim back.
    await h.simulate(pendingMultibanco.transactionId, 'pay');
    const onPaid = await h.openChargeback({ transactionId: pendingMultibanco.transactionId });
    expect(onPaid.status).toBe(201);
    expect(onPaid.body.paymentMethod).toBe('multibanco');
    const created = await events.waitFor(
      (e) => e.type === 'chargeback.created' && (e.data as any).chargebackId === onPaid.body.chargebackId,
    );
    expect(created.envelope.paymentMethod).toBe('multibanco');
    expect(created.envelope.referenceIds).toEqual([
      pendingMultibanco.transactionId,
      onPaid.body.chargebackId,
    ]);
  });

  it('hides other merchants’ payments and chargebacks (404) and refuses live keys (403)', async () => {
    const { transactionId } = await paidOrder();
    const { chargebackId } = (await h.openChargeback({ transactionId })).body;

    const other = { 'x-api-key': (await h.env.createMerchant('Other Shop')).apiKey };
    for (const answer of [
      await h.openChargeback({ transactionId }, other),
      await h.request('GET', `/api/v2/sandbox/chargebacks/${chargebackId}`, undefined, other),
      await h.moveChargeback(chargebackId, 'disputing', other),
    ]) {
      expect([answer.status, answer.body.code]).toEqual([404, 'BYRD901']);
    }

    const live = { 'x-api-key': (await h.env.createMerchant('Live Shop', 'live')).apiKey };
    const asLive = await h.openChargeback({ transactionId }, live);
    expect([asLive.status, asLive.body.code]).toEqual([403, 'BYRD403']);
    expect((await h.request('GET', `/api/v2/sandbox/chargebacks/${chargebackId}`)).body.status).toBe(
      'Created',
    );
  });

  it('validates the request, naming the field', async () => {
    const badId = await h.openChargeback({ transactionId: 'tx-1' });
    expect(badId.status).toBe(400);
    expect(badId.body.errors.map((e: any) => e.field)).toEqual(['transactionId']);

    const { transactionId } = await paidOrder();
    const tooPrecise = await h.openChargeback({ transactionId, amount: '1.234' });
    expect(tooPrecise.status).toBe(400);
    expect(tooPrecise.body.errors.map((e: any) => e.field)).toEqual(['amount']);

    expect((await h.request('GET', '/api/v2/sandbox/chargebacks/not-a-guid')).status).toBe(404);
  });
});
