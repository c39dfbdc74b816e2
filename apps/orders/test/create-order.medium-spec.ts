import { randomUUID } from 'node:crypto';
import type { CreateOrderRequest } from '@byrd/contracts';
import { EventConsumers, loadConfig, NatsContext, Outbox, type MerchantContext } from '@byrd/platform';
import { MediumDatabase, TEST_NATS_URL } from '@byrd/platform/testing';
import { ordersConfigSchema } from '../src/config.js';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '../src/database.js';
import { CreateOrder } from '../src/orders/create-order.usecase.js';
import { OrderEventRecorder } from '../src/orders/order-events.js';

/**
 * CreateOrder on a real PostgreSQL (medium tier): two requests of one idempotency-key that both run.
 * The key's lease normally lets one run at a time; both run when the first stalled past its lease (a
 * paused replica) and the merchant's retry took the key over. Each finds no order of the key yet.
 */
describe('CreateOrder with one idempotency-key twice at once (medium)', () => {
  let db: MediumDatabase;
  let nats: NatsContext;
  let create: CreateOrder;

  beforeAll(async () => {
    db = await MediumDatabase.create({
      service: 'orders',
      entities: ORDERS_ENTITIES,
      migrations: ORDERS_MIGRATIONS,
    });
    const config = loadConfig(ordersConfigSchema, {
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      OUTBOX_RELAY_ENABLED: 'false',
    });
    nats = await NatsContext.open({ url: TEST_NATS_URL, name: 'orders-medium' }, `medium${randomUUID()}.`);
    const outbox = new Outbox(db.dataSource, nats, config, new EventConsumers(db.dataSource, nats, config));
    create = new CreateOrder(db.dataSource, new OrderEventRecorder(outbox), config);
  });
  afterAll(async () => {
    await nats?.close();
    await db?.close();
  });

  it('makes one order and announces it once, however many requests of the key run at once', async () => {
    const request: CreateOrderRequest = { amount: '25.00', currency: 'EUR', orderRef: 'twice' };
    for (let round = 0; round < 10; round++) {
      const merchant: MerchantContext = {
        merchantId: `merchant-${randomUUID()}`,
        merchantName: 'Medium',
        mode: 'sandbox',
        scopes: [],
      };
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => create.execute(merchant, request, key)),
      );

      const orders = await db.dataSource.query<{ id: string }[]>(
        `SELECT id FROM orders WHERE merchant_id = $1`,
        [merchant.merchantId],
      );
      expect(orders).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.orderId))).toEqual(new Set([orders[0].id]));
      const created = await db.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM outbox WHERE subject LIKE '%order.created' AND payload -> 'data' ->> 'orderId' = $1`,
        [orders[0].id],
      );
      expect(created[0].n).toBe(1);
    }
  });
});
