import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  callService,
  futureExpiry,
  startServiceProcess,
  TestEnvironment,
  type EventCollector,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { PAYMENTS_MAIN, startOrdersAndPayments } from './migrated-env.js';

const FRICTIONLESS = '5448280000000007';

/**
 * kill -9 of payments while a shopper's Multibanco or MB WAY payment is being settled: after orders
 * gave the order's lock to that payment and before its settlement committed. Orders is paused
 * (SIGSTOP) while the `pay` notification is in flight, so payments waits in rpc.orders.lockPayment;
 * payments is killed there; orders resumes and takes the lock for the payment that died. Payments
 * then restarts with the same environment, and the next notification of the payment must still end
 * right: paid exactly once, or ended without money with the order payable again at once.
 */
describe('async settlement survives kill -9 of payments', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let paymentsVars: Record<string, string>;
  let payments: ServiceProcess | undefined;
  let orders: ServiceProcess;
  let paymentsDb: DataSource;
  let ordersDb: DataSource;
  let events: EventCollector;
  let lockSpy: ReturnType<TestEnvironment['nats']['nc']['subscribe']>;
  const lockRequests: string[] = [];

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const world = await startOrdersAndPayments(env, {
      orders: { LOG_LEVEL: 'warn' },
      payments: { PUBLIC_BASE_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'warn' },
    });
    [orders, payments] = [world.orders, world.payments[0]];
    const ordersVars = world.ordersVars;
    // Restarted on the same port after each kill.
    paymentsVars = { ...world.paymentsVars, HTTP_PORT: new URL(payments.url).port };
    paymentsDb = await new DataSource({ type: 'postgres', url: paymentsVars.DATABASE_URL }).initialize();
    ordersDb = await new DataSource({ type: 'postgres', url: ordersVars.DATABASE_URL }).initialize();
    merchant = await env.createMerchant('Crash Shop');
    events = await env.collect('transaction.>');
    // Sees every lock request payments sends (a plain subscriber beside orders' queue group).
    lockSpy = env.nats.nc.subscribe(env.nats.subject('rpc.orders.lockPayment'), {
      callback: (_error, message) => {
        lockRequests.push(message.subject);
      },
    });
  });

  afterAll(async () => {
    orders?.child.kill('SIGCONT');
    orders?.child.kill('SIGKILL');
    payments?.child.kill('SIGKILL');
    lockSpy?.unsubscribe();
    await paymentsDb?.destroy();
    await ordersDb?.destroy();
    await env?.cleanup();
  });

  const call = (base: string, method: string, route: string, body?: unknown) =>
    callService(base, merchant.apiKey, method, route, body);
  const simulate = (transactionId: string, action: string) =>
    call(payments!.url, 'POST', `/api/v2/sandbox/payments/${transactionId}/${action}`);
  const getOrder = async (orderId: string) =>
    (await call(orders.url, 'GET', `/api/v2/orders/${orderId}`)).body;

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const eventsOf = (type: string, transactionId: string) =>
    events
      .ofType(type)
      .filter((e) => (e.envelope.data as { transactionId: string }).transactionId === transactionId);

  /** A pending Multibanco or MB WAY payment of a new order, as a merchant backend creates it. */
  async function pendingPayment(
    type: 'multibanco' | 'mbway' = 'multibanco',
  ): Promise<{ orderId: string; transactionId: string }> {
    const order = await call(orders.url, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
      orderRef: `crash-${randomUUID().slice(0, 8)}`,
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
    });
    expect(order.status).toBe(201);
    const { orderId } = order.body as { orderId: string };
    const created = await call(payments!.url, 'POST', '/api/v2/payment', {
      type,
      amount: '25.00',
      currency: 'EUR',
      orderId,
      redirectUrl: 'https://shop.example.com/return',
      ...(type === 'mbway' ? { mbway: { phoneNumber: '912345678' } } : {}),
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('Processing');
    await waitFor('the order to be pending', async () => (await getOrder(orderId)).status === 'pending');
    return { orderId, transactionId: created.body.transactionId as string };
  }

  const paymentStatus = async (transactionId: string) =>
    (
      await paymentsDb.query<{ status: string }[]>(`SELECT status FROM transactions WHERE id = $1`, [
        transactionId,
      ])
    )[0].status;

  const orderLockHolder = async (orderId: string) =>
    (
      await ordersDb.query<{ payment_lock_id: string | null }[]>(
        `SELECT payment_lock_id FROM orders WHERE id = $1`,
        [orderId],
      )
    )[0].payment_lock_id;

  /**
   * The shopper pays at the ATM; payments asks orders for the order's lock and is killed (kill -9)
   * while orders is paused; orders then wakes up and gives the lock to the payment that died, and
   * payments is started again with the same environment.
   */
  async function killPaymentsWhileLocking(orderId: string, transactionId: string): Promise<void> {
    const asked = lockRequests.length;
    orders.child.kill('SIGSTOP');
    try {
      const cutOff = simulate(transactionId, 'pay').then(
        (answer) => `answered ${answer.status}`,
        () => 'no answer',
      );
      await waitFor('payments to ask orders for the lock', async () => lockRequests.length > asked);
      payments!.child.kill('SIGKILL');
      await payments!.exited();
      payments = undefined;
      // The shopper's notification got no answer: the processor will notify again.
      expect(await cutOff).toBe('no answer');
    } finally {
      orders.child.kill('SIGCONT');
    }
    await waitFor('orders to lock the order for the dead request', async () =>
      (await orderLockHolder(orderId)) === transactionId ? true : null,
    );
    expect(await paymentStatus(transactionId)).toBe('Processing'); // the settlement never committed
    payments = await startServiceProcess(PAYMENTS_MAIN, paymentsVars);
  }

  it('the same pay notification after the restart settles the payment exactly once and pays the order', async () => {
    const { orderId, transactionId } = await pendingPayment();
    await killPaymentsWhileLocking(orderId, transactionId);

    const paid = await simulate(transactionId, 'pay');
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ transactionId, status: 'Success', code: 'BYRD200' });
    const read = await call(payments!.url, 'GET', `/api/v2/transactions/${transactionId}`);
    expect(read.body).toMatchObject({ status: 'Success', code: 'BYRD200' });

    const order = await waitFor('the order to be paid', async () => {
      const found = await getOrder(orderId);
      return found.status === 'paid' && found;
    });
    expect(order.paymentId).toBe(transactionId);
    await events.waitFor(
      (e) => e.type === 'transaction.payment.success' && (e.data as any).transactionId === transactionId,
    );
    // A repeated notification changes nothing; no refund, no second success is ever announced.
    expect((await simulate(transactionId, 'pay')).status).toBe(422);
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsOf('transaction.payment.success', transactionId)).toHaveLength(1);
    expect(
      events
        .ofType('transaction.refund.success')
        .filter((e) => (e.envelope.data as any).sourceTransactionId === transactionId),
    ).toHaveLength(0);
    expect((await getOrder(orderId)).paymentId).toBe(transactionId);
  });

  it.each([
    {
      type: 'multibanco',
      action: 'expire',
      status: 'Denied',
      code: 'BYRD205',
      event: 'transaction.payment.failed',
    },
    {
      type: 'mbway',
      action: 'refuse',
      status: 'Canceled',
      code: 'BYRD208',
      event: 'transaction.payment.canceled',
    },
  ] as const)(
    'a $type $action notification after the restart ends the payment $status and gives the order back at once: a card then pays it, once',
    async ({ type, action, status, code, event }) => {
      const { orderId, transactionId } = await pendingPayment(type);
      await killPaymentsWhileLocking(orderId, transactionId);

      const ended = await simulate(transactionId, action);
      expect(ended.status).toBe(200);
      expect(ended.body).toMatchObject({ transactionId, status, code });

      // The shopper, told this payment ended without money, pays the order by card at once.
      const card = await call(payments!.url, 'POST', '/api/v2/payment', {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId,
        card: { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
      });
      expect(card.status).toBe(201);
      expect(card.body.status).toBe('Success');
      const order = await waitFor('the order to be paid', async () => {
        const found = await getOrder(orderId);
        return found.status === 'paid' && found;
      });
      expect(order.paymentId).toBe(card.body.transactionId);

      // The payment that ended can no longer be paid, and the order holds one charge only.
      expect((await simulate(transactionId, 'pay')).status).toBe(422);
      const charges = await paymentsDb.query<{ id: string }[]>(
        `SELECT id FROM transactions WHERE order_id = $1 AND status = 'Success' AND operation_type = 'Payment'`,
        [orderId],
      );
      expect(charges).toEqual([{ id: card.body.transactionId }]);
      await events.waitFor((e) => e.type === event && (e.data as any).transactionId === transactionId);
      expect(eventsOf('transaction.payment.success', transactionId)).toHaveLength(0);
    },
  );
});
