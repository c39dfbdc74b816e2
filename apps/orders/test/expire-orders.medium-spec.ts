import { randomUUID } from 'node:crypto';
import { type EventEnvelope } from '@byrd/contracts';
import { OutboxMessage } from '@byrd/platform';
import type { MediumDatabase } from '@byrd/platform/testing';
import { CancelCheckoutOrder } from '../src/orders/checkout.usecases.js';
import { ExpireOrders } from '../src/orders/expire-orders.usecase.js';
import { Order } from '../src/orders/order.entity.js';
import type { OrderEventRecorder } from '../src/orders/order-events.js';
import { OrdersMedium } from './medium.js';

/** The expiry sweep on a real PostgreSQL with the orders migrations (medium tier). */
describe('ExpireOrders (medium)', () => {
  let medium: OrdersMedium;
  let db: MediumDatabase;

  beforeAll(async () => {
    medium = await OrdersMedium.start();
    ({ db } = medium);
  });

  afterAll(() => medium?.close());

  /** `count` open orders of one new merchant, all past `expiresAt`. */
  async function dueOrders(count: number): Promise<string> {
    const merchantId = `merchant-${randomUUID()}`;
    const expiresAt = new Date(Date.now() - 60_000);
    const rows = Array.from({ length: count }, () => ({
      id: randomUUID(),
      merchantId,
      merchantName: 'Medium',
      merchantMode: 'sandbox' as const,
      checkoutKey: randomUUID(),
      orderRef: 'ref-1',
      isoAmount: 2500,
      currency: 'EUR',
      status: 'created' as const,
      expiresAt,
      refundedIsoAmount: 0,
    }));
    await db.dataSource.getRepository(Order).insert(rows);
    return merchantId;
  }

  const countOf = (merchantId: string, status: Order['status']) =>
    db.dataSource.getRepository(Order).countBy({ merchantId, status });

  async function expiredEventsOf(merchantId: string): Promise<string[]> {
    const rows = await db.dataSource
      .getRepository(OutboxMessage)
      .createQueryBuilder('m')
      .where(`m.payload ->> 'merchantId' = :merchantId`, { merchantId })
      .andWhere(`m.subject LIKE '%order.expired'`)
      .getMany();
    return rows.map((row) => ((row.payload as EventEnvelope).data as { orderId: string }).orderId);
  }

  it('stops between batches when the service shuts down; the next sweep expires the rest', async () => {
    // A backlog of several batches (100 each): a shutdown that waited for all of it would hold
    // SIGTERM until the orchestrator's SIGKILL.
    const merchantId = await dueOrders(350);
    let shutdown: Promise<void> | undefined;
    const stopped = new Promise<void>((resolve) => {
      // The shutdown begins while the sweep's first batch is being expired.
      const events = Object.create(medium.events) as OrderEventRecorder;
      events.record = (...args) => {
        shutdown ??= sweep.beforeApplicationShutdown().then(resolve);
        return medium.events.record(...args);
      };
      const sweep = new ExpireOrders(db.dataSource, events, { ...medium.config, ORDER_EXPIRY_SWEEP_MS: 10 });
      sweep.onApplicationBootstrap();
    });
    await stopped; // the shutdown waited for the run in progress, which ended early

    const expiredFirst = await countOf(merchantId, 'expired');
    expect(expiredFirst).toBeGreaterThan(0);
    expect(expiredFirst).toBeLessThan(350);
    expect(await countOf(merchantId, 'created')).toBe(350 - expiredFirst);

    // Another replica's (or the restarted one's) sweep goes on where it stopped.
    const next = new ExpireOrders(db.dataSource, medium.events, medium.config);
    expect(await next.execute()).toBe(350 - expiredFirst);
    expect(await countOf(merchantId, 'expired')).toBe(350);
    const announced = await expiredEventsOf(merchantId);
    expect(announced).toHaveLength(350);
    expect(new Set(announced).size).toBe(350);
  });

  it('ends an order whose time ran out as expired when the shopper cancels it before the sweep came by', async () => {
    const merchantId = await dueOrders(1);
    const [order] = await db.dataSource.getRepository(Order).findBy({ merchantId });
    const cancel = new CancelCheckoutOrder(db.dataSource, medium.events);
    expect(await cancel.execute({ orderId: order.id, checkoutKey: order.checkoutKey })).toEqual({
      orderId: order.id,
      status: 'expired',
    });
    // Asked again (a double click): the same answer, nothing announced twice.
    expect(await cancel.execute({ orderId: order.id, checkoutKey: order.checkoutKey })).toEqual({
      orderId: order.id,
      status: 'expired',
    });
    expect(await countOf(merchantId, 'expired')).toBe(1);
    expect(await expiredEventsOf(merchantId)).toEqual([order.id]);
    // The sweep finds nothing left to do, and announces nothing twice.
    await new ExpireOrders(db.dataSource, medium.events, medium.config).execute();
    expect(await expiredEventsOf(merchantId)).toEqual([order.id]);
  });
});
