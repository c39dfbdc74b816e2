import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '@byrd/platform/testing/chromium';
import { futureExpiry } from '@byrd/platform/testing';
import { PaymentsHarness } from './harness.js';

const FRICTIONLESS = '4242424242424242';
const card = { number: FRICTIONLESS, expiration: futureExpiry(), cvv: '123' };

/** A merchant's page, on another origin than payments (another port). */
function startShop(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html lang="en"><title>Checkout</title><h1>Acme checkout</h1></html>');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/**
 * `?checkoutKey=` is a browser-side payment of one order: a merchant's page on its own origin calls
 * `POST /api/v2/payment` and `.../{id}/pay` with JSON, which the browser sends only after a CORS
 * preflight the route answers. Requests with the merchant's x-api-key get no CORS at all: that secret
 * must never be usable from a browser.
 */
describe('?checkoutKey= payment routes from a browser on another origin (CORS)', () => {
  let h: PaymentsHarness;
  let shop: { server: Server; url: string };
  let browser: Browser;

  beforeAll(async () => {
    [h, browser] = await Promise.all([PaymentsHarness.start(), launchChromium()]);
    shop = await startShop();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.server.close(resolve));
    await h?.stop();
  });

  async function newOrder() {
    const { status, body } = await h.createOrder();
    expect(status).toBe(201);
    return body as { orderId: string; checkoutKey: string };
  }

  const preflight = (path: string, requestHeaders: string) =>
    fetch(`${h.paymentsUrl}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin: shop.url,
        'access-control-request-method': 'POST',
        'access-control-request-headers': requestHeaders,
      },
    });

  const corsOf = (headers: Headers) => ({
    origin: headers.get('access-control-allow-origin'),
    credentials: headers.get('access-control-allow-credentials'),
  });

  it('answers the preflight of both checkout-key routes: 204, any origin, POST, content-type and idempotency-key', async () => {
    const { checkoutKey } = await newOrder();
    for (const path of [
      `/api/v2/payment?checkoutKey=${checkoutKey}`,
      `/api/v2/payment/${randomUUID()}/pay?checkoutKey=${checkoutKey}`,
    ]) {
      // A page that asks for x-api-key too (it holds a merchant's key) is not allowed it.
      const answer = await preflight(path, 'content-type,idempotency-key,x-attempt,x-api-key');
      expect(answer.status).toBe(204);
      expect(corsOf(answer.headers)).toEqual({ origin: '*', credentials: null });
      expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = answer.headers.get('access-control-allow-headers')!.split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['content-type', 'idempotency-key', 'x-attempt']));
      expect(allowed).not.toContain('x-api-key');
      expect(Number(answer.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    }
    // Without a checkout key the route is the merchant's backend's: no preflight is answered.
    const apiKeyRoute = await preflight('/api/v2/payment', 'content-type,x-api-key');
    expect(apiKeyRoute.status).toBe(404);
    expect(corsOf(apiKeyRoute.headers).origin).toBeNull();
  });

  it('lets the page read a checkout-key answer (also a refusal), and never one sent with an x-api-key', async () => {
    const order = await newOrder();
    const payment = { type: 'card', amount: '25.00', currency: 'EUR', orderId: order.orderId, card };
    const path = `/api/v2/payment?checkoutKey=${order.checkoutKey}`;
    const fromShop = { origin: shop.url };

    const paid = await h.request('POST', path, payment, { ...fromShop, 'x-api-key': '' });
    expect(paid.status).toBe(201);
    expect(corsOf(paid.headers)).toEqual({ origin: '*', credentials: null });
    expect(paid.headers.get('access-control-expose-headers')).toContain('retry-after');

    const refused = await h.request(
      'POST',
      path,
      { ...payment, amount: 'ten' },
      { ...fromShop, 'x-api-key': '' },
    );
    expect(refused.status).toBe(400);
    expect(corsOf(refused.headers).origin).toBe('*');

    // The merchant's key, with or without a checkout key beside it: nothing a browser may read.
    const other = await newOrder();
    const withApiKey = await h.request(
      'POST',
      `/api/v2/payment?checkoutKey=${other.checkoutKey}`,
      { ...payment, orderId: other.orderId },
      fromShop,
    );
    expect(withApiKey.status).toBe(201);
    expect(corsOf(withApiKey.headers).origin).toBeNull();
    const plain = await h.pay(FRICTIONLESS, {}, fromShop);
    expect(plain.status).toBe(201);
    expect(corsOf(plain.headers).origin).toBeNull();
  });

  it('pays from a page on another origin in Chromium: create without a card, then /pay; an x-api-key is blocked', async () => {
    const order = await newOrder();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${shop.url}/checkout`);
      const outcome = await page.evaluate(
        async ({ base, order, card, apiKey }) => {
          const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
            const response = await fetch(`${base}${path}`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'idempotency-key': crypto.randomUUID(),
                ...headers,
              },
              body: JSON.stringify(body),
            });
            return { status: response.status, body: (await response.json()) as Record<string, any> };
          };
          const checkout = `?checkoutKey=${order.checkoutKey}`;
          const created = await post(`/api/v2/payment${checkout}`, {
            type: 'card',
            amount: '25.00',
            currency: 'EUR',
            orderId: order.orderId,
          });
          const paid = await post(`/api/v2/payment/${created.body.transactionId}/pay${checkout}`, { card });
          // A page holding a merchant's secret key cannot use it: the browser refuses to send it.
          const withKey = await post(
            '/api/v2/payment',
            { type: 'card', amount: '1.00', currency: 'EUR', card },
            {
              'x-api-key': apiKey,
            },
          ).then(
            (answer) => `answered ${answer.status}`,
            (error: Error) => `blocked: ${error.name}`,
          );
          return { created, paid, withKey };
        },
        { base: h.paymentsUrl, order, card, apiKey: h.merchant.apiKey },
      );
      expect(outcome.created).toMatchObject({ status: 201, body: { status: 'Created', code: 'BYRD010' } });
      expect(outcome.paid).toMatchObject({ status: 200, body: { status: 'Success', code: 'BYRD200' } });
      expect(outcome.withKey).toBe('blocked: TypeError');
    } finally {
      await context.close();
    }
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });
});
