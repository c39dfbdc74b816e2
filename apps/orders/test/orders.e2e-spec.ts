import { randomUUID } from 'node:crypto';
import { DataSource as DataSourceToken } from 'typeorm';
import { metricValue, type EventCollector } from '@byrd/platform/testing';
import { OrdersHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('orders over HTTP', () => {
  let h: OrdersHarness;
  let events: EventCollector;

  beforeAll(async () => {
    h = await OrdersHarness.start();
    events = await h.env.collect('order.>');
  });
  afterAll(() => h?.stop());

  describe('POST /api/v2/orders', () => {
    it('creates an order with a checkout key and announces order.created on the EVENTS stream', async () => {
      const before = Date.now();
      const { status, body } = await h.createOrder({ orderRef: 'order-42', metadata: { cart: 7 } });

      expect(status).toBe(201);
      expect(body).toMatchObject({
        status: 'created',
        amount: '25.00',
        isoAmount: 2500,
        currency: 'EUR',
        orderRef: 'order-42',
        shopper: { firstName: 'Ana', email: 'ana@example.com' },
        orderOptions: { redirectUrl: 'https://shop.example.com/return' },
        metadata: { cart: 7 },
        code: 'BYRD200',
      });
      expect(body.orderId).toMatch(GUID);
      expect(body.checkoutKey).toMatch(GUID);
      expect(body.checkoutUrl).toBe(
        `http://127.0.0.1:8080/checkout/#/payment?checkoutKey=${body.checkoutKey}&orderId=${body.orderId}`,
      );
      const ttl = Date.parse(body.expiresAt) - before;
      expect(ttl).toBeGreaterThan(14 * 60_000);
      expect(ttl).toBeLessThanOrEqual(15 * 60_000 + 5_000);

      const event = await events.waitFor(
        (e) => e.type === 'order.created' && (e.data as any).orderId === body.orderId,
      );
      expect(event.subject).toBe(`${h.env.id}.order.created`);
      expect(event.msgId).toBe(event.envelope.id);
      expect(event.envelope).toMatchObject({
        type: 'order.created',
        merchantId: h.merchant.merchantId,
        paymentMethod: null,
        referenceIds: [body.orderId],
        data: {
          orderId: body.orderId,
          orderRef: 'order-42',
          status: 'created',
          amount: '25.00',
          currency: 'EUR',
        },
      });
      expect(event.envelope.id).toMatch(GUID);
      expect(Number.isNaN(Date.parse(event.envelope.occurredAt))).toBe(false);
    });

    it('accepts isoAmount (also as a numeric string) and formats amounts with the currency exponent', async () => {
      const jpy = await h.createOrder({ amount: undefined, isoAmount: '1000', currency: 'JPY' });
      expect(jpy.status).toBe(201);
      expect(jpy.body).toMatchObject({ amount: '1000', isoAmount: 1000, currency: 'JPY' });

      const kwd = await h.createOrder({ amount: '1.5', currency: 'KWD' });
      expect(kwd.body).toMatchObject({ amount: '1.500', isoAmount: 1500 });
    });

    it('takes expiresIn as an hh:mm:ss timespan or as minutes', async () => {
      const span = await h.createOrder({ expiresIn: '01:30:00' });
      const minutes = await h.createOrder({ expiresIn: 5 });
      const ttl = (o: { body: { orderDate: string; expiresAt: string } }) =>
        Date.parse(o.body.expiresAt) - Date.parse(o.body.orderDate);
      expect(ttl(span)).toBe(90 * 60_000);
      expect(ttl(minutes)).toBe(5 * 60_000);
    });

    it('refuses an invalid body with 400 BYRD900 naming each field', async () => {
      const { status, body } = await h.request('POST', '/api/v2/orders', {
        amount: 'ten',
        currency: 'EURO',
        expiresIn: '99 days',
        orderOptions: { redirectUrl: 'not a url' },
      });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
      expect(body.requestId).toBeTruthy();
      const fields = body.errors.map((e: { field: string }) => e.field);
      expect(fields).toEqual(
        expect.arrayContaining(['amount', 'currency', 'expiresIn', 'orderOptions.redirectUrl']),
      );
      expect(body.message).toContain('currency');
    });

    it('refuses an amount with more decimals than the currency has, and disagreeing amount/isoAmount', async () => {
      const tooPrecise = await h.createOrder({ amount: '10.001' });
      expect(tooPrecise.status).toBe(400);
      expect(tooPrecise.body.errors[0].field).toBe('amount');

      const mismatch = await h.createOrder({ amount: '10.00', isoAmount: 999 });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.code).toBe('BYRD900');
    });

    it('refuses a card number typed into orderRef or metadata, storing and announcing nothing', async () => {
      const answer = await h.createOrder({
        orderRef: '4111 1111 1111 1111',
        metadata: { note: 'card 5500-0000-0000-0004' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual(['orderRef', 'metadata']);
      expect(answer.body.errors[1].message).toContain('metadata.note');
      await new Promise((r) => setTimeout(r, 200));
      // By content, not by count: an earlier test's event may still be arriving.
      expect(events.events.filter((e) => /4111 1111|5500-0000/.test(JSON.stringify(e)))).toEqual([]);
    });

    it('refuses a card number sent as a JSON number, as a metadata key, or as the card-saving reference', async () => {
      const answer = await h.createOrder({
        metadata: { total: 4111111111111111, basket: { '5500000000000004': 1 } },
        paymentOptions: { tokenOptions: { customReference: '4111111111111111' } },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([
        'paymentOptions.tokenOptions.customReference',
        'metadata',
      ]);
      expect(JSON.stringify(answer.body)).not.toMatch(/4111111111111111|5500000000000004/);
    });

    it('refuses a metadata number it could not keep as sent (1e309, 9007199254740993) instead of storing it changed', async () => {
      const body = (metadata: string) =>
        `{"amount":"10.00","currency":"EUR","orderRef":"numbers-${Date.now()}","metadata":${metadata}}`;
      const answer = await h.request('POST', '/api/v2/orders', body('{"big":1e309,"id":9007199254740993}'));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([
        { field: 'metadata.big', message: expect.stringContaining('send it as a string') },
        { field: 'metadata.id', message: expect.stringContaining('send it as a string') },
      ]);
      const kept = await h.request('POST', '/api/v2/orders', body('{"id":9007199254740991,"rate":0.125}'));
      expect(kept.status).toBe(201);
      expect(kept.body.metadata).toEqual({ id: 9007199254740991, rate: 0.125 });
    });

    it('answers 413 to a body over 1 MB and 400 to malformed JSON, never with a stack trace', async () => {
      const huge = await h.request(
        'POST',
        '/api/v2/orders',
        JSON.stringify({ orderRef: 'x'.repeat(1_100_000) }),
      );
      expect(huge.status).toBe(413);
      expect(huge.body.code).toBe('BYRD900');

      const broken = await h.request('POST', '/api/v2/orders', '{"amount":');
      expect(broken.status).toBe(400);
      expect(broken.body.code).toBe('BYRD900');
      expect(JSON.stringify(broken.body)).not.toMatch(/at .*\.(js|ts):\d+/);
    });

    it('answers headers over 16 KB with 431 in the error body (refused before any route)', async () => {
      const answer = await h.request('POST', '/api/v2/orders', {}, { 'idempotency-key': 'k'.repeat(20_000) });
      expect(answer.status).toBe(431);
      expect(answer.body).toEqual({
        code: 'BYRD900',
        description: 'Invalid input',
        message: 'The request headers exceed the 16 KB limit',
        requestId: answer.headers.get('x-request-id'),
      });
    });
  });

  describe('authentication and merchant isolation', () => {
    it('answers 401 BYRD401 without a key or with an unknown key', async () => {
      const missing = await h.request('GET', `/api/v2/orders/${randomUUID()}`, undefined, {
        'x-api-key': '',
      });
      expect(missing.status).toBe(401);
      expect(missing.body.code).toBe('BYRD401');

      const unknown = await h.createOrder({}, { 'x-api-key': randomUUID() });
      expect(unknown.status).toBe(401);
      expect(unknown.body).toMatchObject({ code: 'BYRD401', description: 'Unauthorized' });
    });

    it("answers 404 BYRD901 for another merchant's order and for ids that are not GUIDs", async () => {
      const { body: order } = await h.createOrder();
      const other = await h.env.createMerchant('Other Shop');

      const foreign = await h.request('GET', `/api/v2/orders/${order.orderId}`, undefined, {
        'x-api-key': other.apiKey,
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('BYRD901');

      const own = await h.request('GET', `/api/v2/orders/${order.orderId}`);
      expect(own.status).toBe(200);
      expect((await h.request('GET', '/api/v2/orders/not-a-guid')).status).toBe(404);
    });

    it('reads an order named by its id in capitals, as a body names it (a client that stored it so)', async () => {
      const { body: order } = await h.createOrder();
      const upper = await h.request('GET', `/api/v2/orders/${order.orderId.toUpperCase()}`);
      expect(upper.status).toBe(200);
      expect(upper.body.orderId).toBe(order.orderId);
    });

    it('stops accepting a revoked key within a second', async () => {
      const merchant = await h.env.createMerchant('Short-lived');
      const headers = { 'x-api-key': merchant.apiKey };
      expect((await h.createOrder({}, headers)).status).toBe(201);

      await h.env.revokeKey(merchant.apiKey);
      await new Promise((r) => setTimeout(r, 1_000));
      const after = await h.createOrder({}, headers);
      expect(after.status).toBe(401);
    });

    it('answers unknown routes with 404 in the error body', async () => {
      const { status, body } = await h.request('GET', '/api/v2/nothing-here');
      expect(status).toBe(404);
      expect(body.code).toBe('BYRD901');
    });
  });

  describe('idempotency-key', () => {
    it('creates exactly one order for concurrent identical requests and replays the answer', async () => {
      const key = randomUUID();
      const payload = { amount: '12.00', currency: 'EUR', orderRef: `idem-${key}` };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          h.request('POST', '/api/v2/orders', payload, { 'idempotency-key': key }),
        ),
      );
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.orderId)).size).toBe(1);
      expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      for (const running of answers.filter((a) => a.status === 409)) {
        expect(running.body).toMatchObject({ code: 'BYRD409', description: 'Request in progress' });
      }

      const replay = await h.request('POST', '/api/v2/orders', payload, { 'idempotency-key': key });
      expect(replay.status).toBe(201);
      expect(replay.body.orderId).toBe(created[0].body.orderId);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');

      const rows = await h.app
        .get(DataSourceToken)
        .query('SELECT count(*)::int AS n FROM orders WHERE order_ref = $1', [payload.orderRef]);
      expect(rows[0].n).toBe(1);
    });

    it('claims the keys of requests arriving together in one statement: several keys, each sent five times at once, make one order each', async () => {
      // Claims of concurrent requests are written together: a key twice in one statement, or two
      // statements taking the same keys in another order, must not fail or deadlock (a 500, or a
      // request stuck until the database breaks the deadlock).
      const keys = Array.from({ length: 8 }, () => randomUUID());
      const sends = keys.flatMap((key, i) =>
        Array.from({ length: 5 }, () => ({
          key,
          payload: { amount: `${10 + i}.00`, currency: 'EUR', orderRef: `batch-${key}` },
        })),
      );
      const answers = await Promise.all(
        [...sends, ...[...sends].reverse()].map(({ key, payload }) =>
          h.request('POST', '/api/v2/orders', payload, { 'idempotency-key': key }),
        ),
      );
      expect(answers.map((a) => a.status).filter((status) => status !== 201 && status !== 409)).toEqual([]);
      const db = h.app.get(DataSourceToken);
      for (const key of keys) {
        const rows = await db.query('SELECT count(*)::int AS n FROM orders WHERE order_ref = $1', [
          `batch-${key}`,
        ]);
        expect(rows[0].n).toBe(1);
        const replay = await h.request('POST', '/api/v2/orders', sends.find((s) => s.key === key)!.payload, {
          'idempotency-key': key,
        });
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
      }
    });

    it('refuses a deeply nested body sent with a key with 400 BYRD900, as it does without one', async () => {
      // The key's hash of the body is taken before the validation pipe; JSON.stringify overflows
      // the stack on a few thousand levels (a 12 KB body).
      const depth = 6_000;
      const nested = `{"amount":"10.00","currency":"EUR","metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      for (const headers of [{}, { 'idempotency-key': randomUUID() }] as Record<string, string>[]) {
        const answer = await h.request('POST', '/api/v2/orders', nested, headers);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 'BYRD900', description: 'Invalid input' });
        expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(js|ts):\d+|call stack/);
      }
    });

    it('forgets a key after 24 hours', async () => {
      const key = randomUUID();
      const first = await h.createOrder({ amount: '10.00' }, { 'idempotency-key': key });
      // A day passes, for the key and for the order it made.
      const db = h.app.get(DataSourceToken);
      await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = $1`, [
        key,
      ]);
      await db.query(`UPDATE orders SET created_at = now() - interval '25 hours' WHERE id = $1`, [
        first.body.orderId,
      ]);
      const later = await h.createOrder({ amount: '11.00' }, { 'idempotency-key': key });
      expect(later.status).toBe(201);
      expect(later.body.orderId).not.toBe(first.body.orderId);
    });

    it('replays the answer to a retry that writes its API key in another case', async () => {
      const key = randomUUID();
      const payload = { amount: '10.00', currency: 'EUR', orderRef: `case-${key.slice(0, 8)}` };
      const first = await h.createOrder(payload, { 'idempotency-key': key });
      expect(first.status).toBe(201);
      const retry = await h.createOrder(payload, {
        'idempotency-key': key,
        'x-api-key': ` ${h.merchant.apiKey.toUpperCase()} `,
      });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.orderId).toBe(first.body.orderId);
    });

    it('refuses the same key with a different body (422)', async () => {
      const key = randomUUID();
      expect((await h.createOrder({ amount: '10.00' }, { 'idempotency-key': key })).status).toBe(201);
      const reuse = await h.createOrder({ amount: '11.00' }, { 'idempotency-key': key });
      expect(reuse.status).toBe(422);
      expect(reuse.body.message).toMatch(/idempotency-key/);
    });
  });

  describe('service endpoints', () => {
    it('reports readiness and serves its OpenAPI description', async () => {
      const ready = await fetch(`${h.baseUrl}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', database: 'up', nats: 'up' });

      const docs = await fetch(`${h.baseUrl}/docs/json`);
      const spec = (await docs.json()) as {
        paths: Record<string, { post?: { parameters?: { name: string; in: string; required?: boolean }[] } }>;
        info: { description: string };
      };
      expect(Object.keys(spec.paths)).toEqual(
        expect.arrayContaining(['/api/v2/orders', '/api/v2/orders/{orderId}']),
      );
      // Optional, once: a generated client must not demand it.
      const keyHeaders = spec.paths['/api/v2/orders'].post!.parameters!.filter(
        (p) => p.name === 'idempotency-key',
      );
      expect(keyHeaders).toEqual([expect.objectContaining({ in: 'header', required: false })]);
      // The error table: every status and the codes it carries.
      expect(spec.info.description).toContain('| 409 | BYRD409 Request in progress; BYRD201');
      expect(spec.info.description).toContain('| 429 | BYRD206 Operation blocked by velocity |');
    });

    it('exports Prometheus metrics without an API key: requests by route pattern and status, the pool, the outbox, the consumers', async () => {
      const scrape = async () => {
        const answer = await fetch(`${h.baseUrl}/metrics`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toContain('text/plain');
        return answer.text();
      };
      const requests = (text: string, method: string, route: string, status: string) =>
        metricValue(text, 'http_request_duration_seconds_count', { method, route, status }) ?? 0;
      const before = await scrape();
      const { body: order } = await h.createOrder();
      expect((await h.request('GET', `/api/v2/orders/${order.orderId}`)).status).toBe(200);
      // A path no route matches is counted under one label value, whatever was asked.
      expect((await h.request('GET', `/api/v2/nothing-here/${order.orderId}`)).status).toBe(404);
      const after = await scrape();
      const counted = (method: string, route: string, status: string) =>
        requests(after, method, route, status) - requests(before, method, route, status);
      expect(counted('POST', '/api/v2/orders', '201')).toBe(1);
      expect(counted('GET', '/api/v2/orders/:orderId', '200')).toBe(1);
      expect(counted('GET', 'unmatched', '404')).toBe(1);
      expect(after).not.toContain('nothing-here');
      expect(metricValue(after, 'db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
      expect(metricValue(after, 'db_pool_connections', { state: 'waiting' })).toBe(0);
      // The relay publishes what the order wrote: the backlog drains.
      expect(metricValue(after, 'outbox_backlog_events')).toBeGreaterThanOrEqual(0);
      expect(metricValue(after, 'outbox_oldest_event_age_seconds')).toBeGreaterThanOrEqual(0);
      expect(
        metricValue(after, 'events_consumer_pending', { consumer: 'orders-transactions', state: 'pending' }),
      ).toBe(0);
      expect(metricValue(after, 'events_consumed_total', { result: 'handled' })).toBeGreaterThanOrEqual(0);
      expect(metricValue(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    });
  });
});
