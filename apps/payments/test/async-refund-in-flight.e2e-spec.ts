import { DataSource } from 'typeorm';
import type { EventCollector } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

/**
 * A refund of an MB WAY payment copies its method, so while it waits for the acquirer it looks like a
 * pending MB WAY payment. The shopper simulation must not settle it: only the acquirer's answer does.
 */
describe('the sandbox shopper and a refund of an async payment in flight', () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    // The acquirer holds its answer long enough for the simulation to reach the refund in flight.
    h = await PaymentsHarness.start({ SANDBOX_ACQUIRER_DELAY_MS: '2000' });
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  /** The refund of `paymentId` once it is written ahead (Processing, at the acquirer). */
  async function refundInFlightOf(paymentId: string): Promise<{ id: string; status: string }> {
    const db = h.payments.get(DataSource);
    const deadline = Date.now() + 5_000;
    for (;;) {
      const [refund] = await db.query<{ id: string; status: string }[]>(
        `SELECT id, status FROM transactions WHERE source_transaction_id = $1 AND operation_type = 'Refund'`,
        [paymentId],
      );
      if (refund) return refund;
      if (Date.now() > deadline) throw new Error(`No refund of ${paymentId} was written`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('refuses to "pay" a refund waiting for the acquirer; the refund ends as the acquirer answered', async () => {
    const order = (await h.createOrder({ amount: '40.00' })).body;
    const payment = (await h.payAsync('mbway', { orderId: order.orderId, amount: '40.00' })).body;
    expect((await h.simulate(payment.transactionId, 'pay')).body.status).toBe('Success');
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');

    const refunding = h.request('POST', `/api/v2/refund/${payment.transactionId}`, { isoAmount: 4000 });
    const inFlight = await refundInFlightOf(payment.transactionId);
    expect(inFlight.status).toBe('Processing');

    const simulated = await h.simulate(inFlight.id, 'pay');
    const refunded = await refunding;
    expect(simulated.status).toBe(422);
    expect(simulated.body).toMatchObject({ code: 'BYRD205', description: 'Operation rejected' });
    expect(simulated.body.message).toMatch(/refund/i);
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({ transactionId: inFlight.id, status: 'Success', code: 'BYRD200' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'refunded');

    // Nothing refunded the refund, and it was announced once.
    const db = h.payments.get(DataSource);
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM transactions WHERE source_transaction_id = $1`,
      [inFlight.id],
    );
    expect(n).toBe(0);
    await events.waitFor(
      (e) => e.type === 'transaction.refund.success' && (e.data as any).transactionId === inFlight.id,
    );
    await new Promise((r) => setTimeout(r, 500)); // a second announcement would be right behind it
    const announced = events.events
      .filter((e) => (e.envelope.data as any).transactionId === inFlight.id)
      .map((e) => e.envelope.type);
    expect(announced).toEqual(['transaction.refund.success']);
  });
});
