// What the browser tests of the hosted form share: the merchant's site (another origin than the
// form: its return page and a page that embeds the form in an iframe), the form's address for an
// order, and the shopper's gestures (typing a card, answering the issuer's challenge).
import { mkdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Frame, Page } from 'playwright-core';
import { buildCheckoutUrl } from '@byrd/contracts';
import { futureExpiry } from '@byrd/platform/testing';

export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Sandbox cards (API-FACTS.md). */
export const CARDS = {
  frictionless: '4242424242424242',
  challenge: '5555341244441115',
  denied: '4000000000000002',
  /** The acquirer approves but its answer is lost (TemporaryFailed): payments' recovery settles it as a success. */
  timeout: '5201282999005515',
} as const;

/** The sandbox issuer's one-time code that authenticates a challenge. */
export const GOOD_OTP = '1234';

/** A merchant site on its own origin: `/return` (the redirectUrl) and `/embed` (the form in an iframe). */
export interface Shop {
  url: string;
  returnUrl: string;
  /** The merchant's checkout page embedding the form at `formUrl`. */
  embedUrl(formUrl: string): string;
  close(): Promise<void>;
}

export async function startShop(): Promise<Shop> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/return') {
      res.end('<!doctype html><html lang="en"><title>Acme Shop</title><h1>Back at the shop</h1></html>');
      return;
    }
    if (url.pathname === '/embed') {
      const src = url.searchParams.get('src') ?? '';
      const escaped = src.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
      res.end(`<!doctype html>
<html lang="en"><head><title>Acme Shop checkout</title></head>
<body style="font-family:sans-serif;background:#fafafa;margin:24px">
<h1>Acme Shop</h1>
<p>Your basket: 1 × Coffee beans</p>
<iframe title="Payment" src="${escaped}" style="width:480px;height:760px;border:1px solid #ddd;border-radius:12px;background:#fff"></iframe>
<script>
  // What the form tells its embedder, kept for the test across the navigation that follows.
  addEventListener('message', (event) => sessionStorage.setItem(event.data.type, JSON.stringify(event.data)));
</script>
</body></html>`);
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    returnUrl: `${url}/return`,
    embedUrl: (formUrl) => `${url}/embed?src=${encodeURIComponent(formUrl)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An edge in front of the BFF that forwards every request; for one that `lose` picks, it waits for
 * the BFF's answer and then drops the connection (`'drop'`) or answers 502 in its place: the answer
 * is lost after the BFF acted on the request.
 */
export async function startLossyEdge(
  target: string,
  lose: (method: string, path: string) => 'drop' | 502 | null,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const how = lose(req.method ?? 'GET', req.url ?? '/');
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        if (!how) {
          // No keep-alive: Chromium silently sends a request again once when a reused connection drops.
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, connection: 'close' });
          answer.pipe(res);
          return;
        }
        answer.resume();
        answer.on('end', () => (how === 'drop' ? req.socket.destroy() : res.writeHead(502).end()));
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The form's address for an order; `configs` gets the order's id and key unless the test overrides them. */
export function formUrl(
  checkoutUrl: string,
  order: { orderId: string; checkoutKey: string },
  configs: Record<string, unknown> | null = {},
): string {
  return buildCheckoutUrl(checkoutUrl, {
    orderId: order.orderId,
    checkoutKey: order.checkoutKey,
    ...(configs ? { configs: { orderId: order.orderId, checkoutKey: order.checkoutKey, ...configs } } : {}),
  });
}

/** Types a card the way a shopper does (key by key, so the formatting runs). */
export async function typeCard(
  page: Page | Frame,
  number: string,
  { expiry = futureExpiry(), cvv = '123', holder = 'Ana Silva' } = {},
): Promise<void> {
  await page.getByLabel('Card number').fill('');
  await page.getByLabel('Card number').pressSequentially(number);
  await page.getByLabel('Expiry date').fill('');
  await page.getByLabel('Expiry date').pressSequentially(expiry.replace('/', ''));
  await page.getByLabel('Security code').fill(cvv);
  await page.getByLabel('Name on card').fill(holder);
}

/** Answers the sandbox issuer's challenge inside the 3DS iframe of the form. */
export async function answerChallenge(page: Page | Frame, otp: string, screenshot?: () => Promise<unknown>) {
  const issuer = page.frameLocator('iframe[title="Payment verification by your bank"]');
  await issuer.getByLabel('One-time code').fill(otp);
  if (screenshot) await screenshot();
  await issuer.getByRole('button', { name: 'Submit' }).click();
}

export function artifactsDir(): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return ARTIFACTS;
}

/**
 * Problems a shopper would not see but a merchant would care about: script errors, CSP refusals,
 * failed requests (but for the 3DS SDK's polling, answered 409 until the shopper has replied).
 */
export function watchForErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    // Chromium's notice that the issuer's challenge page (another origin, in a frame) may not autofocus.
    const issuerAutofocus = text.startsWith(
      'Blocked autofocusing on a <input> element in a cross-origin subframe',
    );
    if (message.type() === 'error' && !text.startsWith('Failed to load resource') && !issuerAutofocus) {
      errors.push(`console: ${text}`);
    }
  });
  page.on('response', (response) => {
    const { pathname } = new URL(response.url());
    const polling = response.status() === 409 && pathname.endsWith('/postAuth');
    if (response.status() >= 400 && !polling) errors.push(`${response.status()} ${response.url()}`);
  });
  return errors;
}
