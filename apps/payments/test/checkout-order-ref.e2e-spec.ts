import { DataSource } from 'typeorm';
import { futureExpiry, type EventCollector } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const FRICTIONLESS = '4242424242424242';
const card = { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' };
const anonymous = { 'x-api-key': '' }; // a browser holds the order's checkout key, not the API key

interface Order {
  orderId: string;
  checkoutKey: string;
  orderRef: string;
}

/**
 * A shop plugin matches payments to its orders by orderRef (webhooks, `GET /api/v2/transactions?orderRef=`).
 * A shopper holding the checkout key of a cheap order must not label its payment with the reference
 * of another order, which the shop would then mark paid.
 */
describe("a ?checkoutKey= payment carries its order's orderRef", () => {
  let h: PaymentsHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    events = await h.env.collect('transaction.>');
  });
  afterAll(() => h?.stop());

  async function newOrder(amount: string): Promise<Order> {
    const { status, body } = await h.createOrder({ amount });
    expect(status).toBe(201);
    return body as Order;
  }

  const payWithCheckoutKey = (order: Order, amount: string, body: Record<string, unknown>) =>
    h.request(
      'POST',
      `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
      { amount, currency: 'EUR', orderId: order.orderId, ...body },
      anonymous,
    );

  const listed = async (query: string) =>
    ((await h.request('GET', `/api/v2/transactions?${query}`)).body.data as { transactionId: string }[]).map(
      (t) => t.transactionId,
    );

  /** Acquirer authorisations of an order's payments (the sandbox acquirer's ledger). */
  async function chargesOf(orderId: string): Promise<number> {
    const [{ n }] = await h.payments.get(DataSource).query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger l JOIN transactions t ON t.id = l.reference
        WHERE t.order_id = $1`,
      [orderId],
    );
    return n;
  }

  /** Each kind of payment a browser may create, and the event it is announced with. */
  const payments: [string, Record<string, unknown>, string][] = [
    ['card', { type: 'card', card }, 'transaction.payment.success'],
    ['card created without its card (two-step)', { type: 'card' }, 'transaction.payment.pending'],
    ['multibanco', { type: 'multibanco' }, 'transaction.payment.pending'],
    ['mbway', { type: 'mbway', mbway: { phoneNumber: '912345678' } }, 'transaction.payment.pending'],
  ];

  it.each(payments)(
    "refuses a %s payment naming another order's orderRef with 400, and charges nothing",
    async (_, body) => {
      const [cheap, dear] = [await newOrder('1.00'), await newOrder('900.00')];
      const answer = await payWithCheckoutKey(cheap, '1.00', { ...body, orderRef: dear.orderRef });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'BYRD900' });
      expect(answer.body.errors).toEqual([expect.objectContaining({ field: 'orderRef' })]);

      expect(await listed(`orderId=${cheap.orderId}`)).toEqual([]);
      expect(await listed(`orderRef=${encodeURIComponent(dear.orderRef)}`)).toEqual([]);
      expect(await chargesOf(cheap.orderId)).toBe(0);
      expect((await h.getOrder(cheap.orderId)).body.status).toBe('created');
    },
  );

  it.each(payments)(
    "labels a %s payment with the order's orderRef, sent or left out: answer, transaction, event and list",
    async (_, body, announcedAs) => {
      for (const sent of ['same', 'absent'] as const) {
        const order = await newOrder('1.00');
        const answer = await payWithCheckoutKey(order, '1.00', {
          ...body,
          ...(sent === 'same' ? { orderRef: order.orderRef } : {}),
        });
        expect(answer.status).toBe(201);
        const { transactionId } = answer.body;
        expect(answer.body.orderRef).toBe(order.orderRef);
        const read = await h.request('GET', `/api/v2/transactions/${transactionId}`);
        expect(read.body.orderRef).toBe(order.orderRef);
        const event = await events.waitFor(
          (e) => e.type === announcedAs && (e.data as any).transactionId === transactionId,
        );
        expect((event.envelope.data as any).orderRef).toBe(order.orderRef);
        expect(await listed(`orderRef=${encodeURIComponent(order.orderRef)}`)).toEqual([transactionId]);
      }
    },
  );

  it("keeps a merchant's own orderRef for its order's payment (x-api-key decides)", async () => {
    const order = await newOrder('25.00');
    const paid = await h.pay(FRICTIONLESS, { orderId: order.orderId, orderRef: 'merchant-own-ref' });
    expect(paid.status).toBe(201);
    expect(paid.body.orderRef).toBe('merchant-own-ref');
  });

  it("labels a hosted-form payment (rpc.payments.create) with its order's orderRef, whatever the request holds", async () => {
    const [cheap, dear] = [await newOrder('1.00'), await newOrder('900.00')];
    const view = await h.rpcAs('hosted-form-bff').call('rpc.payments.create', {
      orderId: cheap.orderId,
      checkoutKey: cheap.checkoutKey,
      // Not a field of the form's payment: dropped, never written onto the payment.
      payment: { type: 'multibanco', orderRef: dear.orderRef } as never,
      saveCard: false,
    });
    const read = await h.request('GET', `/api/v2/transactions/${view.transactionId}`);
    expect(read.body.orderRef).toBe(cheap.orderRef);
    expect(await listed(`orderRef=${encodeURIComponent(dear.orderRef)}`)).toEqual([]);
  });
});
