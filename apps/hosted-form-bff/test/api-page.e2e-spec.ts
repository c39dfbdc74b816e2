import { randomUUID } from 'node:crypto';
import { callHttp, futureExpiry } from '@byrd/platform/testing';
import { CHECKOUT_KEY_HEADER } from '@byrd/contracts';
import { CheckoutHarness, STAND_IN_ASSET, standInWebDir } from './harness.js';

/** The page itself: where it is served, how it is cached, and what the browser may do with it. */
describe('hosted form page and API guards', () => {
  let h: CheckoutHarness;
  beforeAll(async () => {
    h = await CheckoutHarness.start({
      webDir: standInWebDir(),
      bffEnv: {
        CHECKOUT_FRAME_ANCESTORS: "'self' https://shop.example.com https://*.merchant.example",
        RATE_LIMIT_MAX: '6',
        RATE_LIMIT_PAYMENTS_MAX: '2',
        RATE_LIMIT_ORDER_PAYMENTS_MAX: '8',
        RATE_LIMIT_WINDOW_MS: '60000',
      },
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('serves index.html at /checkout/ uncached, with a CSP that allows the 3DS SDK origin and the configured embedders', async () => {
    const page = await fetch(h.checkoutUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain(`/checkout/${STAND_IN_ASSET}`);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const sdk = new URL(h.paymentsUrl).origin;
    const csp = Object.fromEntries(
      page.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(csp).toEqual({
      'default-src': ["'self'"],
      'script-src': ["'self'", sdk],
      'connect-src': ["'self'", sdk],
      'frame-src': [sdk],
      'form-action': [sdk],
      'img-src': ["'self'", 'data:'],
      'style-src': ["'self'"],
      'font-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'frame-ancestors': ["'self'", 'https://shop.example.com', 'https://*.merchant.example'],
    });
    // Embedding is decided by frame-ancestors alone: X-Frame-Options would forbid the merchants' iframes.
    expect(page.headers.get('x-frame-options')).toBeNull();
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('redirects /checkout to /checkout/ keeping the query, so the page resolves its API under it', async () => {
    const answer = await fetch(`${h.bffUrl}/checkout?lang=pt`, { redirect: 'manual' });
    expect(answer.status).toBe(301);
    expect(answer.headers.get('location')).toBe('/checkout/?lang=pt');
  });

  it('serves the hashed assets as immutable, and a missing file or path as a 404 error body', async () => {
    const asset = await fetch(`${h.checkoutUrl}${STAND_IN_ASSET}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await asset.text()).toContain('stand-in');

    for (const path of ['assets/missing-123.js', 'api/v2/unknown', '%2e%2e/%2e%2e/package.json', '.env']) {
      const missing = await fetch(`${h.checkoutUrl}${path}`);
      expect({ path, status: missing.status }).toEqual({ path, status: 404 });
      expect(await missing.json()).toMatchObject({ code: 'BYRD901' });
    }
  });

  it('describes its API in OpenAPI, with the checkout key header', async () => {
    const spec = (await (await fetch(`${h.bffUrl}/docs/json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/checkout/api/v2/orders/{orderId}',
      '/checkout/api/v2/orders/{orderId}/cancel',
      '/checkout/api/v2/orders/{orderId}/payments',
      '/checkout/api/v2/orders/{orderId}/payments/{transactionId}',
    ]);
    const pay = spec.paths['/checkout/api/v2/orders/{orderId}/payments'].post;
    expect(pay.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'x-checkout-key', in: 'header' })]),
    );
    expect(spec.components.schemas.CheckoutPaymentRequest).toBeDefined();
  });

  it("frames each order's page for its merchant's sites once the merchant lists them, and tells the page where it may return", async () => {
    const order = await h.createOrder();
    const ancestors = async (orderId: string) => {
      // From an address of its own as well: each load counts in its client's API limit.
      const page = await fetch(`${h.bffUrl}/checkout/o/${orderId}/`, {
        headers: { 'x-forwarded-for': '203.0.113.98' },
      });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`/checkout/${STAND_IN_ASSET}`);
      return /frame-ancestors ([^;]+)/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    };
    const view = async () =>
      // From an address of its own: the rate-limit test below counts this one's calls.
      (
        await h.api('GET', `/checkout/api/v2/orders/${order.orderId}`, undefined, order.checkoutKey, {
          'x-forwarded-for': '203.0.113.99',
        })
      ).body;
    // No list yet: the operator's CHECKOUT_FRAME_ANCESTORS, and only the order's own redirect origin.
    expect(await ancestors(order.orderId)).toBe("'self' https://shop.example.com https://*.merchant.example");
    expect((await view()).allowedOrigins).toEqual(['https://shop.example.com']);

    const listed = await h.merchantCall(h.ordersUrl, 'PUT', '/api/v2/checkout-origins', {
      origins: ['https://store.example.org'],
    });
    expect(listed.status).toBe(200);
    try {
      expect(await ancestors(order.orderId)).toBe(
        "'self' https://shop.example.com https://store.example.org",
      );
      expect((await view()).allowedOrigins).toEqual([
        'https://shop.example.com',
        'https://store.example.org',
      ]);
      // An order nobody has (or no order at all) may be framed by nobody.
      expect(await ancestors(randomUUID())).toBe("'none'");
      expect(await ancestors('not-an-order')).toBe("'none'");
    } finally {
      await h.merchantCall(h.ordersUrl, 'PUT', '/api/v2/checkout-origins', { origins: [] });
    }
  });

  it('leaves out of frame-ancestors a stored origin listed before hosts were checked (a wildcard, a `;`)', async () => {
    // Written straight to the merchant's record, as PUT /api/v2/checkout-origins now refuses them.
    const merchants = await h.env.nats.kv(`MERCHANTS_${h.env.id}`);
    const record = (await merchants.get(h.merchant.merchantId))!.json<Record<string, unknown>>();
    const setOrigins = (checkoutOrigins: string[]) =>
      merchants.put(h.merchant.merchantId, JSON.stringify({ ...record, checkoutOrigins }));
    await setOrigins(['https://*', 'https://a.com;sandbox', 'https://store.example.org', 'https://a,b.com']);
    try {
      const order = await h.createOrder();
      const page = await fetch(`${h.bffUrl}/checkout/o/${order.orderId}/`, {
        headers: { 'x-forwarded-for': '192.0.2.90' },
      });
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(/frame-ancestors ([^;]+)/.exec(csp)?.[1]).toBe(
        "'self' https://shop.example.com https://store.example.org",
      );
      expect(csp).not.toContain('sandbox');
      expect(csp).not.toContain('*');

      // Only refused entries: still a list (the page and the order's return origin), not the
      // operator's default; and an order whose redirect origin URL spells `;sandbox` (U+FE54).
      await setOrigins(['https://*']);
      const framing = async (orderId: string) => {
        const answer = await fetch(`${h.bffUrl}/checkout/o/${orderId}/`, {
          headers: { 'x-forwarded-for': '192.0.2.91' },
        });
        return /frame-ancestors ([^;]+)/.exec(answer.headers.get('content-security-policy') ?? '')?.[1];
      };
      expect(await framing(order.orderId)).toBe("'self' https://shop.example.com");
      const odd = await h.createOrder({
        orderOptions: { redirectUrl: 'https://shop.example\uFE54sandbox/return' },
      });
      expect(await framing(odd.orderId)).toBe("'self'");
    } finally {
      await setOrigins([]);
    }
  });

  it('refuses an invalid card without echoing it, and answers 429 with Retry-After past the payment limit', async () => {
    const order = await h.createOrder();
    const pay = (card: Record<string, string>) =>
      h.api(
        'POST',
        `/checkout/api/v2/orders/${order.orderId}/payments`,
        { type: 'card', card: { expiration: futureExpiry(), holder: 'Ana Silva', ...card } },
        order.checkoutKey,
      );
    // A CVV no log's ids, hashes or timings can hold by chance (five digits alone can).
    const invalid = await pay({ number: '4242 4242 42', cvv: '98x65' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ code: 'BYRD900' });
    expect(invalid.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'card.cvv',
      'card.number',
    ]);
    const text = JSON.stringify(invalid.body);
    expect(text).not.toContain('42424242');
    expect(text).not.toContain('98x65');

    // A body that is not JSON gets the uniform error body too, without a piece of the body.
    const broken = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      '{"type":"card","card":{"number":"4242424242424242","cvv":"98x65"',
      order.checkoutKey,
    );
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'BYRD900', requestId: expect.any(String) });
    expect(JSON.stringify(broken.body)).not.toContain('42424242');

    expect((await pay({ number: '4242', cvv: '1' })).status).toBe(400);
    const limited = await pay({ number: '4242', cvv: '1' });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      code: 'BYRD206',
      description: 'Operation blocked by velocity',
      message: expect.stringContaining('Too many requests'),
    });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // The API limit (6 a minute) counts every call: 3 payments above, 3 more reads, then 429.
    const read = () => h.api('GET', `/checkout/api/v2/orders/${order.orderId}`, undefined, order.checkoutKey);
    for (let i = 0; i < 3; i += 1) expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(429);
    // The page itself is not limited.
    expect((await fetch(h.checkoutUrl)).status).toBe(200);

    expect(h.logs()).toContain('"statusCode":400'); // the refused requests were logged
    expect(h.logs()).not.toContain('42424242');
    expect(h.logs()).not.toContain('98x65');
  });

  /**
   * Payment attempts (limit 2 a minute) from shoppers behind one proxy hop (the Ingress, or the
   * local edge), which appends the address it saw to X-Forwarded-For; `via` is that address.
   */
  const attempt = (
    base: string,
    order: { orderId: string; checkoutKey: string },
    via: string,
    spoofed: string,
  ) =>
    callHttp(
      base,
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      { type: 'card', card: { number: '4242', cvv: '1' } },
      { [CHECKOUT_KEY_HEADER]: order.checkoutKey, 'x-forwarded-for': `${spoofed}, ${via}` },
    );

  it('keys the limits on the address the trusted proxy saw: rotating X-Forwarded-For buys no attempts', async () => {
    const order = await h.createOrder();
    const statuses = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push((await attempt(h.bffUrl, order, '203.0.113.10', `198.51.100.${i}`)).status);
    expect(statuses).toEqual([400, 400, 429, 429, 429]);
    // Another shopper (another address at the proxy) has attempts of its own.
    expect((await attempt(h.bffUrl, order, '203.0.113.11', '198.51.100.1')).status).toBe(400);
  });

  it('counts an IPv6 shopper by its /64: a new address of its own network buys no attempts', async () => {
    const order = await h.createOrder();
    const statuses = [];
    for (const host of ['a', 'b', 'c', 'd'])
      statuses.push((await attempt(h.bffUrl, order, `2001:db8:1:2::${host}`, '198.51.100.1')).status);
    expect(statuses).toEqual([400, 400, 429, 429]);
    // Another network has attempts of its own.
    expect((await attempt(h.bffUrl, order, '2001:db8:1:3::a', '198.51.100.1')).status).toBe(400);
  });

  it('limits the payment attempts on one order from any number of addresses (card testing through one link)', async () => {
    const order = await h.createOrder();
    const statuses = [];
    for (let i = 0; i < 9; i += 1)
      statuses.push((await attempt(h.bffUrl, order, `203.0.113.${40 + i}`, '198.51.100.1')).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 400, 429]);
    // Another order of the same shoppers is not held back.
    expect((await attempt(h.bffUrl, await h.createOrder(), '203.0.113.40', '198.51.100.1')).status).toBe(400);
  });

  it("does not let attempts without the order's checkout key use up its limit (order ids are not secret)", async () => {
    const order = await h.createOrder();
    // Someone who knows only the order id, from many addresses: 8 attempts (the order's limit).
    for (let i = 0; i < 8; i += 1) {
      const guess = await callHttp(
        h.bffUrl,
        'POST',
        `/checkout/api/v2/orders/${order.orderId}/payments`,
        { type: 'multibanco' },
        { [CHECKOUT_KEY_HEADER]: randomUUID(), 'x-forwarded-for': `192.0.2.${10 + i}` },
      );
      expect(guess.status).toBe(404);
    }
    // The shopper still pays (a denied card: the order stays open for the attempts below).
    const denied = await h.api(
      'POST',
      `/checkout/api/v2/orders/${order.orderId}/payments`,
      { type: 'card', card: { number: '4000000000000002', expiration: futureExpiry(), cvv: '737' } },
      order.checkoutKey,
      { 'x-forwarded-for': '192.0.2.50' },
    );
    expect(denied.status).toBe(201);
    expect(denied.body).toMatchObject({ status: 'Denied' });
    // Card testing with the key, from many addresses, is still held to the order's limit.
    const statuses = [];
    for (let i = 0; i < 8; i += 1)
      statuses.push((await attempt(h.bffUrl, order, `192.0.2.${60 + i}`, '198.51.100.1')).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 429]);
  });

  it('shares the counts between replicas: a shopper spread over two gets the limit once', async () => {
    const order = await h.createOrder();
    const replica = await h.startBffReplica();
    const statuses = [];
    for (const base of [h.bffUrl, replica, h.bffUrl, replica]) {
      statuses.push((await attempt(base, order, '203.0.113.20', '198.51.100.7')).status);
    }
    expect(statuses).toEqual([400, 400, 429, 429]);
    // Concurrent attempts on both replicas are each counted: of 6 at once from a fresh address, 2 pass.
    const other = await h.createOrder();
    const burst = await Promise.all(
      [h.bffUrl, replica, h.bffUrl, replica, h.bffUrl, replica].map((base) =>
        attempt(base, other, '203.0.113.21', '198.51.100.8'),
      ),
    );
    expect(burst.map((answer) => answer.status).sort()).toEqual([400, 400, 429, 429, 429, 429]);
  });

  /** An order's page as a browser loads it into the merchant's frame, from `address`. */
  const framedPage = (orderId: string, address: string) =>
    fetch(`${h.bffUrl}/checkout/o/${orderId}/`, { headers: { 'x-forwarded-for': address } });

  const expectMessagePage = async (page: Response, status: number, title: string) => {
    expect(page.status).toBe(status);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(Number(page.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(`<h1>${title}</h1>`);
    expect(html).not.toContain('BYRD');
  };

  it("counts each load of an order's page in its client's API limit, and past it shows a page, not a JSON body", async () => {
    const order = await h.createOrder();
    const statuses = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await framedPage(order.orderId, '203.0.113.97')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    await expectMessagePage(await framedPage(order.orderId, '203.0.113.97'), 429, 'Too many requests');
    // Another shopper of the same order is not held back.
    expect((await framedPage(order.orderId, '203.0.113.96')).status).toBe(200);
  });

  // Last: orders stays away for the rest of the suite.
  it("shows a page, not the API's JSON error body, in the merchant's frame while orders does not answer", async () => {
    const order = await h.createOrder();
    expect((await framedPage(order.orderId, '203.0.113.95')).status).toBe(200);
    await h.stopOrders();
    await expectMessagePage(await framedPage(order.orderId, '203.0.113.95'), 503, 'Payment page unavailable');
    expect(h.logs()).toContain("The order's page could not be served");
  });
});
