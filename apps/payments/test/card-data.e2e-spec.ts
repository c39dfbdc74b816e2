import {
  cardDataLeaks,
  dumpDatabases,
  futureExpiry,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { startOrdersAndPayments } from './migrated-env.js';


const CARDS = [
  '5448280000000007',
  '4242424242424242',
  '5555341244441115',
  '4000000000000002',
  '378282246310005',
  '5105105105105100',
];
const CVVS = ['987', '6543'];

/**
 * PCI DSS requirement 3, checked the way an auditor would: after a full run of payments (with logs
 * at trace level), no card number and no CVV appears in the databases, the logs or the events.
 */
describe('card data at rest', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let payments: ServiceProcess;
  let orders: ServiceProcess;
  const databases: string[] = [];

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const world = await startOrdersAndPayments(env, {
      orders: { LOG_LEVEL: 'trace' },
      payments: { LOG_LEVEL: 'trace' },
    });
    [orders, payments] = [world.orders, world.payments[0]];
    databases.push(world.ordersVars.DATABASE_URL, world.paymentsVars.DATABASE_URL);
    merchant = await env.createMerchant();
  });
  afterAll(async () => {
    payments?.child.kill('SIGKILL');
    orders?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  const post = async (base: string, pathname: string, body: unknown) => {
    const response = await fetch(`${base}${pathname}`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('keeps no card number or CVV in the databases, logs or events after a full run', async () => {
    const { body: order } = await post(orders.url, '/api/v2/orders', { amount: '100.00', currency: 'EUR' });
    const card = (number: string, cvv = CVVS[0]) => ({
      number,
      expiration: futureExpiry(),
      cvv,
      holder: 'Ana Silva',
    });
    const pay = (number: string, extra: object = {}) =>
      post(payments.url, '/api/v2/payment', {
        type: 'card',
        amount: '100.00',
        currency: 'EUR',
        card: card(number),
        ...extra,
      });

    const preAuth = await pay(CARDS[0], { orderId: order.orderId, isPreAuth: true });
    expect(preAuth.body.status).toBe('Success');
    const capture = await post(payments.url, `/api/v2/capture/${preAuth.body.transactionId}`, {
      isoAmount: 6000,
    });
    await post(payments.url, `/api/v2/refund/${capture.body.transactionId}`, { isoAmount: 3500 });
    expect((await pay(CARDS[1])).body.status).toBe('Success');
    expect((await pay(CARDS[2])).body.code).toBe('BYRD207'); // sealed while the shopper is challenged
    expect((await pay(CARDS[3])).body.status).toBe('Denied');
    expect(
      (
        await post(payments.url, '/api/v2/payment', {
          type: 'card',
          amount: '100.00',
          currency: 'EUR',
          card: card(CARDS[4], CVVS[1]),
        })
      ).body.status,
    ).toBe('Success');
    // Invalid requests are logged too: their card data must be redacted as well.
    expect((await pay('5105105105105101')).status).toBe(400);
    expect(
      (
        await post(payments.url, '/api/v2/payment', {
          type: 'card',
          amount: 'x',
          currency: 'EUR',
          card: card(CARDS[5]),
        })
      ).status,
    ).toBe(400);
    await new Promise((r) => setTimeout(r, 500)); // let the outbox drain

    const streamed: string[] = [];
    const collector = await env.collect('>');
    await collector.waitFor(() => false, 1_000).catch(() => undefined);
    for (const event of collector.events) streamed.push(JSON.stringify(event.envelope));
    expect(streamed.length).toBeGreaterThan(5);

    const places = {
      database: dumpDatabases(databases),
      logs: payments.output() + orders.output(),
      events: streamed.join('\n'),
    };
    expect(places.logs.length).toBeGreaterThan(1_000); // trace logging really ran
    expect(cardDataLeaks(places, [...CARDS, '5105105105105101'], CVVS)).toEqual([]);
    // The masked form is what is kept.
    expect(places.database).toContain('544828******0007');
  });

  it("logs no order's checkout key (a shopper's credential) sent in a browser route's query", async () => {
    const { body: order } = await post(orders.url, '/api/v2/orders', { amount: '10.00', currency: 'EUR' });
    const before = payments.output().length;
    const browser = (pathname: string, body: unknown) =>
      fetch(`${payments.url}${pathname}?checkoutKey=${order.checkoutKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = await browser('/api/v2/payment', {
      type: 'card',
      amount: '10.00',
      currency: 'EUR',
      orderId: order.orderId,
    });
    expect(created.status).toBe(201);
    const { transactionId } = (await created.json()) as { transactionId: string };
    const paid = await browser(`/api/v2/payment/${transactionId}/pay`, {
      card: { number: CARDS[1], expiration: futureExpiry(), cvv: CVVS[0] },
    });
    expect(paid.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200)); // let the lines reach the output

    const logs = payments.output().slice(before);
    expect(logs).toContain('?checkoutKey=[REDACTED]'); // the requests are logged, the key censored
    expect(logs.toLowerCase()).not.toContain(order.checkoutKey.toLowerCase());
    expect(cardDataLeaks({ logs }, [CARDS[1]], CVVS)).toEqual([]);
  });
});
