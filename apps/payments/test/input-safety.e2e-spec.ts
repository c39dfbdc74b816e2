import { randomUUID } from 'node:crypto';
import { ApiError, type Rpc } from '@byrd/platform';
import { DataSource } from 'typeorm';
import { futureExpiry } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const FRICTIONLESS = '4242424242424242';
const card = (overrides: Record<string, unknown> = {}) => ({
  number: FRICTIONLESS,
  expiration: futureExpiry(),
  cvv: '123',
  holder: 'Ana Silva',
  ...overrides,
});

/**
 * Issue 13, item 3: text PostgreSQL cannot store (a NUL, an unpaired UTF-16 surrogate) is refused
 * with 400 BYRD900 naming the field before anything happens: no acquirer call, no row, no order
 * locked, whether the payment comes from a merchant's backend or the hosted form.
 */
describe('input the database would refuse is refused first', () => {
  let h: PaymentsHarness;
  let payments: DataSource;
  let orders: DataSource;
  let bff: Rpc;

  beforeAll(async () => {
    h = await PaymentsHarness.start();
    payments = h.payments.get(DataSource);
    orders = h.orders.get(DataSource);
    bff = h.rpcAs('hosted-form-bff');
  });
  afterAll(() => h?.stop());

  /** What the payment side has recorded: our transactions and the sandbox acquirer's own ledger. */
  async function recorded() {
    const count = async (table: string) =>
      (await payments.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
    const transactions = await count('transactions');
    const authorisations = await count('sandbox_acquirer_ledger');
    return { transactions, authorisations };
  }

  it('refuses a form-encoded body on the API (JSON posted by PHP curl without its Content-Type): a partial refund moves nothing, a payment records nothing', async () => {
    const paid = await h.pay(FRICTIONLESS, { amount: '100.00' });
    expect(paid.body.status).toBe('Success');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const refund = await h.request(
      'POST',
      `/api/v2/refund/${paid.body.transactionId}`,
      '{"isoAmount":4000}',
      {
        ...form,
        'idempotency-key': `form-${randomUUID()}`,
      },
    );
    expect(refund.status).toBe(400);
    expect(refund.body).toMatchObject({ code: 'BYRD900', message: 'Content-Type must be application/json' });

    const before = await recorded();
    const fields = `type=card&isoAmount=1000&currency=EUR&card[number]=${FRICTIONLESS}&card[cvv]=123`;
    const payment = await h.request('POST', '/api/v2/payment', fields, form);
    expect(payment.status).toBe(400);
    expect(payment.body.message).toBe('Content-Type must be application/json');
    expect(await recorded()).toEqual(before);
    // The same JSON with its Content-Type refunds the part asked for, of the whole amount still there.
    const partial = await h.request('POST', `/api/v2/refund/${paid.body.transactionId}`, { isoAmount: 4000 });
    expect(partial.body).toMatchObject({
      code: 'BYRD200',
      isoAmount: 4000,
      sourceTransaction: { refundedAmount: '40.00', remainingAmount: '60.00' },
    });
  });

  it('refuses a NUL in card.holder or orderRef of an API payment: no acquirer call, no row', async () => {
    const before = await recorded();

    const holder = await h.pay(FRICTIONLESS, { card: card({ holder: 'Ana\u0000Silva' }) });
    expect(holder.status).toBe(400);
    expect(holder.body).toEqual({
      code: 'BYRD900',
      description: 'Invalid input',
      message: 'Invalid value for card.holder',
      errors: [{ field: 'card.holder', message: 'must not contain a NUL character (\\u0000)' }],
      requestId: expect.any(String),
    });

    const orderRef = `nul-\u0000-${Date.now()}`;
    const reference = await h.pay(FRICTIONLESS, { orderRef }, { 'idempotency-key': `k-${Date.now()}` });
    expect(reference.status).toBe(400);
    expect(reference.body.errors).toEqual([{ field: 'orderRef', message: expect.stringContaining('NUL') }]);

    const surrogate = await h.pay(FRICTIONLESS, { card: card({ holder: 'Ana \uDE00' }) });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.errors).toEqual([
      { field: 'card.holder', message: expect.stringContaining('unpaired UTF-16 surrogate') },
    ]);

    expect(await recorded()).toEqual(before);
    const listed = await h.request('GET', `/api/v2/transactions?orderRef=${encodeURIComponent(orderRef)}`);
    expect(listed.status).toBe(400);
    expect(listed.body.errors).toEqual([{ field: 'orderRef', message: expect.stringContaining('NUL') }]);

    // The same payment with clean text goes through: the refusal was about the bytes only.
    const clean = await h.pay(FRICTIONLESS, { card: card({ holder: 'Ana Silva 😀' }) });
    expect(clean.status).toBe(201);
    expect(clean.body).toMatchObject({ code: 'BYRD200', status: 'Success' });
    expect(await recorded()).toEqual({
      transactions: before.transactions + 1,
      authorisations: before.authorisations + 1,
    });
  });

  it("refuses an unpaired surrogate in an order's metadata (values and keys) and creates no order", async () => {
    const count = async () =>
      (await orders.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM orders`))[0].n;
    const before = await count();

    const value = await h.createOrder({ metadata: { note: 'gift \uD83D', ok: 'fine' } });
    expect(value.status).toBe(400);
    expect(value.body).toMatchObject({
      code: 'BYRD900',
      errors: [{ field: 'metadata.note', message: expect.stringContaining('surrogate') }],
    });
    const nested = await h.createOrder({ metadata: { lines: [{ sku: 'a' }, { sku: 'b\u0000' }] } });
    expect(nested.body.errors).toEqual([
      { field: 'metadata.lines.1.sku', message: expect.stringContaining('NUL') },
    ]);
    const key = await h.createOrder({ metadata: { 'note\u0000': 'x' } });
    expect(key.status).toBe(400);
    expect(key.body.errors).toEqual([
      { field: 'metadata', message: expect.stringContaining('property name') },
    ]);
    const orderRef = await h.createOrder({ orderRef: 'ref\u0000' });
    expect(orderRef.body.errors).toEqual([{ field: 'orderRef', message: expect.stringContaining('NUL') }]);

    expect(await count()).toBe(before);
    const emoji = await h.createOrder({ metadata: { note: 'gift 🎁' } });
    expect(emoji.status).toBe(201);
    expect(emoji.body.metadata).toEqual({ note: 'gift 🎁' });
  });

  it('refuses the same on the hosted form path (rpc.payments.create), leaving the order payable', async () => {
    const { status, body: order } = await h.createOrder();
    expect(status).toBe(201);
    const before = await recorded();

    const error = await bff
      .call('rpc.payments.create', {
        orderId: order.orderId,
        checkoutKey: order.checkoutKey,
        payment: { type: 'card', card: card({ holder: 'Ana\u0000' }) },
        saveCard: false,
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('BYRD900');
    expect((error as ApiError).errors).toEqual([
      { field: 'card.holder', message: 'must not contain a NUL character (\\u0000)' },
    ]);
    expect(await recorded()).toEqual(before);

    // Nothing was taken: the shopper corrects the name and pays.
    const paid = await bff.call('rpc.payments.create', {
      orderId: order.orderId,
      checkoutKey: order.checkoutKey,
      payment: { type: 'card', card: card() },
      saveCard: false,
    });
    expect(paid).toMatchObject({ status: 'Success', code: 'BYRD200' });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it('refuses, before the validation libraries read it, a body of more property names than any request has (no key needed)', async () => {
    // class-transformer's cost grows with the square of an object's keys once a field fails:
    // 80,000 of them in a body under the 1 MB limit held the process for seconds.
    const many = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1]));
    const payment = await fetch(`${h.paymentsUrl}/api/v2/payment?checkoutKey=${randomUUID()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...many, type: 'nope' }),
    });
    expect(payment.status).toBe(400);
    expect(await payment.json()).toMatchObject({
      code: 'BYRD900',
      errors: [{ field: '', message: 'has more than 1000 properties' }],
    });
    // A form body walks the same way (the page words the 400 in HTML; before, it came after 10 s).
    const notification = await fetch(`${h.paymentsUrl}/3ds/notification`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Object.keys(many)
        .map((key) => `${key}=`)
        .join('&'),
    });
    expect(notification.status).toBe(400);
  });

  it('refuses a NUL in a path parameter as invalid input, not a server error', async () => {
    const read = await h.request('GET', '/api/v2/transactions/%00');
    expect(read.status).toBe(400);
    expect(read.body).toMatchObject({ code: 'BYRD900', errors: [{ field: 'transactionId' }] });
  });
});
