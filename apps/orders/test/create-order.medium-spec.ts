import { randomUUID } from 'node:crypto';
import type { CreateOrderRequest } from '@byrd/contracts';
import type { MerchantContext } from '@byrd/platform';
import { CreateOrder } from '../src/orders/create-order.usecase.js';
import { OrdersMedium } from './medium.js';

/**
 * CreateOrder on a real PostgreSQL (medium tier): two requests of one idempotency-key that both run.
 * The key's lease normally lets one run at a time; both run when the first stalled past its lease (a
 * paused replica) and the merchant's retry took the key over. Each finds no order of the key yet.
 */
describe('CreateOrder with one idempotency-key twice at once (medium)', () => {
  let medium: OrdersMedium;
  let create: CreateOrder;

  beforeAll(async () => {
    medium = await OrdersMedium.start();
    create = new CreateOrder(medium.db.dataSource, medium.events, medium.config);
  });
  afterAll(() => medium?.close());

  const newMerchant = (): MerchantContext => ({
    merchantId: `merchant-${randomUUID()}`,
    merchantName: 'Medium',
    mode: 'sandbox',
    scopes: [],
  });

  it('answers a retry of the key whose answer was lost with its order, and refuses one that changed any field', async () => {
    const merchant = newMerchant();
    const key = randomUUID();
    const request: CreateOrderRequest = {
      amount: '25.00',
      currency: 'EUR',
      orderRef: 'retried',
      expiresIn: '00:30:00',
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
    };
    const first = await create.execute(merchant, request, key);
    // The same request, its fields written in another order: the same order.
    const { orderOptions, ...rest } = request;
    expect((await create.execute(merchant, { orderOptions, ...rest }, key)).orderId).toBe(first.orderId);
    // Amount, currency and reference unchanged, but another expiry or redirect: refused, as the
    // key's stored answer would refuse it.
    for (const changed of [
      { ...request, expiresIn: '02:00:00' },
      { ...request, orderOptions: { redirectUrl: 'https://elsewhere.example.com/return' } },
    ]) {
      await expect(create.execute(merchant, changed, key)).rejects.toMatchObject({ code: 'BYRD900' });
    }
  });

  it('makes one order and announces it once, however many requests of the key run at once', async () => {
    const request: CreateOrderRequest = { amount: '25.00', currency: 'EUR', orderRef: 'twice' };
    for (let round = 0; round < 10; round++) {
      const merchant = newMerchant();
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => create.execute(merchant, request, key)),
      );

      const orders = await medium.db.dataSource.query<{ id: string }[]>(
        `SELECT id FROM orders WHERE merchant_id = $1`,
        [merchant.merchantId],
      );
      expect(orders).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.orderId))).toEqual(new Set([orders[0].id]));
      const created = await medium.db.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM outbox WHERE subject LIKE '%order.created' AND payload -> 'data' ->> 'orderId' = $1`,
        [orders[0].id],
      );
      expect(created[0].n).toBe(1);
    }
  });
});
