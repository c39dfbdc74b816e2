import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '@byrd/platform/testing/chromium';
import { PaymentsHarness } from './harness.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const CHALLENGE_CARD = '5555341244441115';

/**
 * A shop on another origin than payments: its return page (the payment's redirectUrl) and a checkout
 * page that loads our SDK from payments, as a merchant's site would.
 */
function startShop(paymentsUrl: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (url.pathname === '/return') {
      res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Back at the shop</h1></html>');
      return;
    }
    if (url.pathname === '/checkout') {
      res.end(`<!doctype html>
<html lang="en"><head><title>Checkout</title></head>
<body>
<h1>Acme checkout</h1>
<div id="three-ds" style="width:420px;height:560px;border:1px solid #ccc"></div>
<output id="result"></output>
<script type="module">
import { ByrdThreeDS } from '${paymentsUrl}/3ds/sdk.js';
const query = new URLSearchParams(location.search);
try {
  const result = await ByrdThreeDS.authenticate({
    id: query.get('id'),
    requestId: query.get('requestId'),
    container: document.getElementById('three-ds'),
    pollIntervalMs: 200,
  });
  window.threeDSResult = result;
  document.getElementById('result').textContent = result.status + ' / ' + result.paymentStatus;
} catch (error) {
  document.getElementById('result').textContent = 'failed: ' + error.message;
}
</script>
</body></html>`);
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/** Types the code on the issuer's page inside the challenge iframe and submits it. */
async function answerChallenge(page: Page, screenshot: string, amount = '25.00 EUR') {
  const issuer = page.frameLocator('iframe[title="Payment verification by your bank"]');
  const code = issuer.getByLabel('One-time code');
  await code.fill('1234');
  await expect(issuer.getByText(amount).isVisible()).resolves.toBe(true);
  await page.screenshot({ path: `${ARTIFACTS}${screenshot}`, fullPage: true });
  await issuer.getByRole('button', { name: 'Submit' }).click();
}

/** A shopper in Chromium completing the sandbox issuer's challenge, through action.url and through the SDK. */
describe('3D Secure challenge in Chromium', () => {
  let h: PaymentsHarness;
  let shop: { server: Server; url: string };
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Installing Chromium (first run on a fresh machine only) may take a few minutes.
    [h, browser] = await Promise.all([
      PaymentsHarness.start({}, { publicBaseIsSelf: true }),
      launchChromium(),
    ]);
    shop = await startShop(h.paymentsUrl);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.server.close(resolve));
    await h?.stop();
  });

  async function challengeOrder(redirectUrl: string) {
    const { body: order } = await h.createOrder();
    const { body: payment } = await h.pay(CHALLENGE_CARD, {
      orderId: order.orderId,
      orderRef: order.orderRef,
      redirectUrl,
    });
    expect(payment.code).toBe('BYRD207');
    return { order, payment };
  }

  function newPage() {
    return browser.newPage({ viewport: { width: 800, height: 900 } });
  }

  it('completes a challenge through action.url and returns to the shop with the outcome; the order is paid', async () => {
    const { order, payment } = await challengeOrder(`${shop.url}/return?cart=42`);
    const page = await newPage();
    // Script errors, CSP refusals and failed requests, but for the 409s of postAuth while the
    // shopper types (the SDK's polling) and the favicon the pages deliberately lack.
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        errors.push(message.text());
      }
    });
    page.on('response', (response) => {
      const { pathname } = new URL(response.url());
      const polling = response.status() === 409 && pathname.endsWith('/postAuth');
      if (response.status() >= 400 && !polling && pathname !== '/favicon.ico') {
        errors.push(`${response.status()} ${response.url()}`);
      }
    });
    try {
      await page.goto(payment.action.url);
      await answerChallenge(page, 'three-ds-action-url-challenge.png');

      await page.waitForURL((url) => url.pathname === '/return', { timeout: 10_000 });
      const back = new URL(page.url());
      expect(Object.fromEntries(back.searchParams)).toEqual({
        cart: '42',
        transactionId: payment.transactionId,
        status: 'Success',
      });
      await expect(page.getByRole('heading').textContent()).resolves.toBe('Back at the shop');
      await page.screenshot({ path: `${ARTIFACTS}three-ds-action-url-result.png` });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });

  it("completes a challenge through our SDK on a merchant's page; the order is paid", async () => {
    const { order, payment } = await challengeOrder(`${shop.url}/return`);
    const page = await newPage();
    try {
      const query = new URLSearchParams({ id: payment.threeDSecure.id, requestId: payment.requestId });
      await page.goto(`${shop.url}/checkout?${query.toString()}`);
      await answerChallenge(page, 'three-ds-sdk-challenge.png');

      await page.locator('#result').filter({ hasText: '/' }).waitFor({ timeout: 10_000 });
      await expect(page.locator('#result').textContent()).resolves.toBe('Authorized / Success');
      const result: unknown = await page.evaluate(() => Reflect.get(globalThis, 'threeDSResult'));
      expect(result).toMatchObject({
        transactionId: payment.transactionId,
        callbackUrl: `${shop.url}/return`,
        status: 'Authorized',
        transStatus: 'Y',
        paymentStatus: 'Success',
        code: 'BYRD200',
        authenticationData: { threeDsVersion: 'V2', eci: '02', aav: expect.any(String) },
      });
      // The SDK leaves nothing behind in the merchant's container.
      await expect(page.locator('#three-ds > *').count()).resolves.toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}three-ds-sdk-result.png` });
    } finally {
      await page.close();
    }
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');
  });
});

/**
 * A shopper whose payment's acquirer answer is lost (amount 10.01: the acquirer charged, the answer
 * never came back) and who reloads action.url while the recovery settles it: told "failed" they
 * would pay again, so the page waits, then returns them with the recovered outcome.
 */
describe('3D Secure action.url in Chromium while the acquirer recovery settles a lost answer', () => {
  let h: PaymentsHarness;
  let shop: { server: Server; url: string };
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    [h, browser] = await Promise.all([
      PaymentsHarness.start(
        {
          ACQUIRER_TIMEOUT_MS: '2000',
          ACQUIRER_RECOVERY_AFTER_MS: '4000',
          ACQUIRER_RECOVERY_SWEEP_MS: '200',
        },
        { publicBaseIsSelf: true },
      ),
      launchChromium(),
    ]);
    shop = await startShop(h.paymentsUrl);
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.server.close(resolve));
    await h?.stop();
  });

  it('a reload after the code shows "Confirming your payment", then the shop with status Success', async () => {
    const { body: payment } = await h.pay(CHALLENGE_CARD, {
      amount: '10.01',
      redirectUrl: `${shop.url}/return`,
    });
    expect(payment.code).toBe('BYRD207');
    const page = await browser.newPage({ viewport: { width: 800, height: 900 } });
    const returns: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.url().startsWith(`${shop.url}/return`))
        returns.push(request.url());
    });
    try {
      await page.goto(payment.action.url);
      await answerChallenge(page, 'three-ds-lost-answer-challenge.png', '10.01 EUR');
      // The acquirer's answer is lost: the payment reads TemporaryFailed until the recovery settles it.
      for (let stored = ''; stored !== 'TemporaryFailed';) {
        stored = (await h.request('GET', `/api/v2/transactions/${payment.transactionId}`)).body.status;
        expect(['Created', 'Processing', 'TemporaryFailed']).toContain(stored);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await page.reload();
      await expect(page.getByRole('heading', { name: 'Confirming your payment' }).isVisible()).resolves.toBe(
        true,
      );
      await page.screenshot({ path: `${ARTIFACTS}three-ds-lost-answer-waiting.png` });

      await page.waitForURL((url) => url.pathname === '/return', { timeout: 20_000 });
      // Sent back once, with the recovered outcome: never with a failure first.
      expect(returns.map((url) => new URL(url).searchParams.get('status'))).toEqual(['Success']);
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({
        transactionId: payment.transactionId,
        status: 'Success',
      });
    } finally {
      await page.close();
    }
  }, 60_000);
});
