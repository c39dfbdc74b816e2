import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { futureExpiry } from '@byrd/platform/testing';
import { launchChromium } from '@byrd/platform/testing/chromium';
import { CheckoutHarness } from '../harness.js';
import {
  answerChallenge,
  artifactsDir,
  CARDS,
  formUrl,
  GOOD_OTP,
  startLossyEdge,
  startShop,
  typeCard,
  watchForErrors,
  type Shop,
} from './support.js';

const shots = artifactsDir();
/**
 * What the page waits in these tests (`window.byrdCheckoutTimings`); defaults in web/src/timings.ts.
 * The leave delay keeps the shopper's 0.9 s: tests read "Payment successful" before the page leaves,
 * and at 400 ms a loaded CI machine once saw the shop's page first.
 */
const PAGE_TIMINGS = { followEveryMs: 250, leaveDelayMs: 900, outcomeEveryMs: 250 };

/**
 * A shopper paying on the hosted form in Debian's Chromium, against the real services (orders,
 * payments with its sandbox acquirer and 3DS pages, the card vault, the BFF serving the built page).
 * The merchant's site is another origin: it receives the shopper back and embeds the form.
 */
describe('hosted form in Chromium', () => {
  let h: CheckoutHarness;
  let shop: Shop;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    // Installing Chromium (first run on a fresh machine only) may take a few minutes.
    [h, browser, shop] = await Promise.all([
      CheckoutHarness.start({
        logLevel: 'warn',
        // The merchant's test site is plain http on loopback: allow it to embed the form.
        bffEnv: { CHECKOUT_FRAME_ANCESTORS: "'self' https: http://127.0.0.1:*" },
        ordersEnv: { ORDER_EXPIRY_SWEEP_MS: '250' },
        // The recovery of a payment whose acquirer answer was lost, in seconds (default 60 s). The
        // sandbox answers that card at once, so this is the whole wait of the two tests that use it;
        // 5 s still leaves their in-flight steps (reload, the other tab's refused answer, ~1-2 s under
        // load) well before it.
        paymentsEnv: {
          ACQUIRER_TIMEOUT_MS: '2000',
          ACQUIRER_RECOVERY_AFTER_MS: '5000',
          ACQUIRER_RECOVERY_SWEEP_MS: '250',
        },
      }),
      launchChromium(),
      startShop(),
    ]);
    // The merchant's site is where the links' configs.redirectUrl points (orders default to another).
    const origins = await h.merchantCall(h.ordersUrl, 'PUT', '/api/v2/checkout-origins', {
      origins: [shop.url],
    });
    expect(origins.body).toEqual({ origins: [shop.url] });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await h?.stop();
  });

  async function open(options: BrowserContextOptions = {}) {
    context = await browser.newContext({ viewport: { width: 1000, height: 900 }, ...options });
    // The page's own waits (web/src/timings.ts: 2.5 s between reads of what it follows, 0.9 s before
    // leaving, 1.5 s between reads after 3DS), shortened: the same steps in the same order, without
    // minutes of sitting out. The leaving page still shows long enough for the tests that read it.
    await context.addInitScript((timings) => {
      (window as { byrdCheckoutTimings?: typeof timings }).byrdCheckoutTimings = timings;
    }, PAGE_TIMINGS);
    page = await context.newPage();
    errors = watchForErrors(page);
    return page;
  }
  beforeEach(() => open());
  afterEach(async () => {
    await context?.close();
  });

  const configsFor = (extra: Record<string, unknown> = {}) => ({ redirectUrl: shop.returnUrl, ...extra });
  const goto = (order: { orderId: string; checkoutKey: string }, extra: Record<string, unknown> = {}) =>
    page.goto(formUrl(h.checkoutUrl, order, configsFor(extra)));
  const heading = () => page.getByRole('heading', { level: 2 }).first().textContent();
  const backAtShop = async () => {
    await page.waitForURL((url) => url.href.startsWith(shop.returnUrl), { timeout: 30_000 });
    return Object.fromEntries(new URL(page.url()).searchParams);
  };
  /** The page's transaction: the answer of its POST .../payments. */
  const nextPayment = () =>
    page
      .waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/payments'))
      .then((r) => r.json() as Promise<Record<string, any>>);
  const announced = (text: string) =>
    page.waitForFunction((expected) => document.getElementById('announcer')?.textContent === expected, text);
  const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
  /** `page` and a second tab, both paying `order` by card and waiting at the bank challenge. */
  const twoTabsAtChallenge = async (order: { orderId: string; checkoutKey: string }) => {
    const other = await context.newPage();
    for (const tab of [page, other]) {
      await tab.goto(formUrl(h.checkoutUrl, order, configsFor({ defaultPaymentMethod: 'card' })));
      await typeCard(tab, CARDS.challenge);
      await tab.getByRole('button', { name: 'Pay €25.00' }).click();
      await tab.getByRole('heading', { name: 'Confirm with your bank' }).waitFor();
    }
    return other;
  };

  describe('card', () => {
    it('pays a card without a challenge and returns to the shop with orderId and status; the merchant sees the order paid', async () => {
      const order = await h.createOrder();
      await goto(order);
      await expect(heading()).resolves.toBe('Choose how to pay');
      await expect(page.locator('.merchant').textContent()).resolves.toBe('Acme Shop');
      await expect(page.locator('.amount').textContent()).resolves.toBe('Amount to pay: €25.00');
      await expect(page.locator('.order-ref').textContent()).resolves.toBe(`Order ${order.orderRef}`);
      await expect(page.getByRole('note').textContent()).resolves.toBe(
        'Test mode: no real payment will be made',
      );
      await expect(page.locator('.method-name').allTextContents()).resolves.toEqual([
        'Card',
        'Multibanco',
        'MB WAY',
      ]);
      await page.screenshot({ path: `${shots}methods.png` });

      await page.getByRole('button', { name: /^Card/ }).click();
      await expect(heading()).resolves.toBe('Pay by card');
      // No "save my card" for an order without tokenOptions.customReference; no cancel by default.
      await expect(page.getByLabel('Save my card for future payments').count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: 'Cancel payment' }).count()).resolves.toBe(0);
      await typeCard(page, CARDS.frictionless);
      await expect(page.getByLabel('Card number').inputValue()).resolves.toBe('4242 4242 4242 4242');
      await expect(page.locator('[data-brand]').getAttribute('data-brand')).resolves.toBe('visa');
      await page.screenshot({ path: `${shots}card.png` });

      const payments: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().endsWith('/payments')) payments.push(r.url());
      });
      // A double click sends one payment.
      await page.getByRole('button', { name: 'Pay €25.00' }).dblclick();
      const back = await backAtShop();
      expect(back).toEqual({ orderId: order.orderId, transactionId: expect.any(String), status: 'Success' });
      expect(payments).toHaveLength(1);
      const paid = await h.waitForOrderStatus(order.orderId, 'paid');
      expect(paid.transactions).toHaveLength(1);
      expect(errors).toEqual([]);
    });

    it('returns the shopper only once the order shows the payment, so the merchant page reads it paid', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.frictionless);
      // Orders applies the payment's event late (a backlog of its consumer).
      const held = await h.holdOrderUpdates();
      let holding = true;
      try {
        await page.getByRole('button', { name: 'Pay €25.00' }).click();
        await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 30_000 });
        // Well past the 0.9 s the page shows its success for: it waits for the order.
        await page.waitForTimeout(2_500);
        expect(page.url().startsWith(shop.returnUrl)).toBe(false);
        expect((await h.getOrder(order.orderId)).status).not.toBe('paid');
        holding = false;
        await held.release();
        await expect(backAtShop()).resolves.toMatchObject({ orderId: order.orderId, status: 'Success' });
        // What the merchant's page reads as the shopper arrives (SPEC's flow, step 3).
        await expect(h.getOrder(order.orderId)).resolves.toMatchObject({ status: 'paid' });
      } finally {
        if (holding) await held.release();
      }
      expect(errors).toEqual([]);
    });

    it('returns the shopper after a bounded wait when the order does not show the payment in time', async () => {
      await page.addInitScript(() => {
        const page = window as { byrdCheckoutTimings?: Record<string, number> };
        page.byrdCheckoutTimings = { ...page.byrdCheckoutTimings, orderShowsPaymentWaitMs: 2_000 };
      });
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.frictionless);
      const held = await h.holdOrderUpdates();
      try {
        await page.getByRole('button', { name: 'Pay €25.00' }).click();
        await expect(backAtShop()).resolves.toMatchObject({ orderId: order.orderId, status: 'Success' });
        expect((await h.getOrder(order.orderId)).status).not.toBe('paid');
      } finally {
        await held.release();
      }
      await h.waitForOrderStatus(order.orderId, 'paid');
    });

    it('runs the bank challenge inside the page and, with autoRedirect off, shows its own landing page checked with the backend', async () => {
      const order = await h.createOrder();
      await goto(order, { autoRedirect: false, defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.challenge);
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      await page.getByRole('heading', { name: 'Confirm with your bank' }).waitFor();
      await answerChallenge(page, GOOD_OTP, () => page.screenshot({ path: `${shots}challenge.png` }));

      await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 30_000 });
      await expect(page.getByText('You paid €25.00 to Acme Shop.').isVisible()).resolves.toBe(true);
      await page.screenshot({ path: `${shots}success.png` });
      // The landing page read the payment again from the backend.
      const transactionId = await page.locator('.details dd').textContent();
      await h.waitForOrderStatus(order.orderId, 'paid');

      await page.getByRole('button', { name: 'Return to Acme Shop' }).click();
      expect(await backAtShop()).toEqual({ orderId: order.orderId, transactionId, status: 'Success' });
      expect(errors).toEqual([]);
    });

    it('shows a declined card and a failed challenge on the form, then pays with another card', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.denied);
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      await expect(alert.textContent()).resolves.toBe(
        'The payment was declined. Try another card or contact your bank.',
      );
      // The alert takes the focus on the next frame after it shows (a loaded machine draws it late).
      await page
        .waitForFunction(() => document.activeElement?.id === 'card-form-error', undefined, {
          timeout: 5_000,
        })
        .catch(() => undefined);
      await expect(focusedId()).resolves.toBe('card-form-error');
      // The number stays for the shopper to correct; the security code is never kept.
      await expect(page.getByLabel('Card number').inputValue()).resolves.toBe('4000 0000 0000 0002');
      await expect(page.getByLabel('Security code').inputValue()).resolves.toBe('');

      await typeCard(page, CARDS.challenge);
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      await answerChallenge(page, '0000');
      await page
        .getByText('Your bank could not confirm the payment. Try again or use another card.')
        .waitFor({
          timeout: 30_000,
        });

      await typeCard(page, CARDS.frictionless);
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });
      const paid = await h.waitForOrderStatus(order.orderId, 'paid');
      expect(paid.transactions.map((t: { status: string }) => t.status).sort()).toEqual([
        'Denied',
        'Denied',
        'Success',
      ]);
    });

    it('follows a payment whose acquirer answer was lost until the recovery settles it, then returns to the shop; a reload shows it in progress', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.timeout);
      const payment = nextPayment();
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      const { transactionId, status } = await payment;
      expect(status).toBe('TemporaryFailed');
      // Not "try again" on a form that can only answer 422: the attempt holds the order until it settles.
      await page.locator('#outcome-title, [role=alert]').first().waitFor();
      await expect(heading()).resolves.toBe('Payment being processed');
      await expect(page.locator('form').count()).resolves.toBe(0);
      await page.screenshot({ path: `${shots}card-processing.png` });

      // The same link opened again while the payment is in flight.
      const reloaded = await context.newPage();
      await reloaded.goto(formUrl(h.checkoutUrl, order, configsFor()));
      await reloaded.getByRole('heading', { name: 'A payment for this order is in progress' }).waitFor();
      await expect(reloaded.locator('.method, form, .pay').count()).resolves.toBe(0);

      // Payments' recovery (ACQUIRER_RECOVERY_AFTER_MS) finds the acquirer's approval.
      await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 30_000 });
      expect(await backAtShop()).toEqual({ orderId: order.orderId, transactionId, status: 'Success' });
      await h.waitForOrderStatus(order.orderId, 'paid');
      await reloaded
        .getByRole('heading', { name: 'This order has already been paid' })
        .waitFor({ timeout: 15_000 });
      expect(errors).toEqual([]);
    });

    it('two tabs at the bank challenge: the one answered second shows the order paid, not "declined"', async () => {
      const order = await h.createOrder();
      const other = await twoTabsAtChallenge(order);
      await answerChallenge(page, GOOD_OTP);
      expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });

      // The second answer finds the order held by the first payment: that attempt is refused.
      await answerChallenge(other, GOOD_OTP);
      // The page reads the order first: paid (or "in progress" until the first payment's event lands).
      await other.locator('#closed-title, [role=alert]').first().waitFor({ timeout: 20_000 });
      await expect(other.locator('form, [role=alert]').allTextContents()).resolves.toEqual([]);
      await other
        .getByRole('heading', { name: 'This order has already been paid' })
        .waitFor({ timeout: 15_000 });
      const paid = await h.waitForOrderStatus(order.orderId, 'paid');
      expect(paid.transactions.map((t: { status: string }) => t.status).sort()).toEqual([
        'Denied',
        'Success',
      ]);
      expect(errors).toEqual([]);
    });

    it('two tabs: the one answered while the other payment is at the bank shows that payment in progress, not "declined", then the order paid', async () => {
      const order = await h.createOrder();
      // The second tab waits at its bank challenge.
      const other = await context.newPage();
      const otherErrors = watchForErrors(other);
      await other.goto(formUrl(h.checkoutUrl, order, configsFor({ defaultPaymentMethod: 'card' })));
      await typeCard(other, CARDS.challenge);
      await other.getByRole('button', { name: 'Pay €25.00' }).click();
      await other.getByRole('heading', { name: 'Confirm with your bank' }).waitFor();

      // This tab pays with a card whose acquirer answer is lost: its payment holds the order's
      // payment lock until payments' recovery settles it (ACQUIRER_RECOVERY_AFTER_MS).
      await goto(order, { defaultPaymentMethod: 'card' });
      await typeCard(page, CARDS.timeout);
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      for (const deadline = Date.now() + 10_000; ;) {
        const view = await h.api(
          'GET',
          `/checkout/api/v2/orders/${order.orderId}`,
          undefined,
          order.checkoutKey,
        );
        if (view.body.paymentLocked) break;
        if (Date.now() > deadline) throw new Error(`Order ${order.orderId} never held by the first payment`);
        await page.waitForTimeout(50);
      }

      // The other shopper authenticates now: the order refuses their payment (BYRD205, never sent to
      // the bank). Their card was not declined, and the page must not say so.
      await answerChallenge(other, GOOD_OTP);
      await other.locator('#closed-title, [role=alert]').first().waitFor({ timeout: 20_000 });
      await expect(other.locator('form, [role=alert]').allTextContents()).resolves.toEqual([]);
      await other.getByRole('heading', { name: 'A payment for this order is in progress' }).waitFor();
      await other.screenshot({ path: `${shots}card-refused-while-another-in-progress.png` });

      // The first payment settles (the recovery finds the acquirer's approval): both tabs show it.
      expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });
      await other
        .getByRole('heading', { name: 'This order has already been paid' })
        .waitFor({ timeout: 30_000 });
      const paid = await h.waitForOrderStatus(order.orderId, 'paid');
      expect(paid.transactions.map((t: { status: string }) => t.status).sort()).toEqual([
        'Denied',
        'Success',
      ]);
      const refused = paid.transactions.find((t: { status: string }) => t.status === 'Denied');
      // The merchant's API keeps its documented answer for the refused attempt.
      const asMerchant = await h.merchantCall(
        h.paymentsUrl,
        'GET',
        `/api/v2/transactions/${refused.transactionId}`,
      );
      expect(asMerchant.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
      expect(errors).toEqual([]);
      expect(otherErrors).toEqual([]);
    });

    it('two tabs at the bank challenge of a pre-authorised order: the second, and the link reopened in any language, show it authorised', async () => {
      const order = await h.createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } });
      const other = await twoTabsAtChallenge(order);
      await answerChallenge(page, GOOD_OTP);
      expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });
      // Orders knows of the pre-authorisation, which holds the order (`pending`) until captured.
      for (const deadline = Date.now() + 15_000; ;) {
        const { status, transactions } = await h.getOrder(order.orderId);
        if (status === 'pending' && transactions.some((t: any) => t.status === 'Success')) break;
        if (Date.now() > deadline) throw new Error(`Order ${order.orderId} never pre-authorised`);
        await page.waitForTimeout(100);
      }

      // The second answer finds the order held by the first pre-authorisation: that attempt is refused.
      await answerChallenge(other, GOOD_OTP);
      const authorised = other.getByRole('heading', {
        name: 'The payment for this order has been authorised',
      });
      await other.locator('#closed-title, [role=alert]').first().waitFor({ timeout: 20_000 });
      await expect(other.locator('form, [role=alert]').allTextContents()).resolves.toEqual([]);
      await authorised.waitFor();
      await expect(
        other
          .getByText(
            'There is nothing left to pay. Acme Shop will charge your card when your order is confirmed.',
          )
          .isVisible(),
      ).resolves.toBe(true);
      const back = new URL(
        (await other.getByRole('link', { name: 'Return to Acme Shop' }).getAttribute('href'))!,
      );
      expect(Object.fromEntries(back.searchParams)).toEqual({ orderId: order.orderId, status: 'pending' });

      // The link opened again, in English and in Portuguese: no form, no "in progress".
      await other.goto(formUrl(h.checkoutUrl, order, configsFor()));
      await authorised.waitFor();
      await expect(other.locator('.method, form, .pay').count()).resolves.toBe(0);
      await other.goto(formUrl(h.checkoutUrl, order, configsFor({ locale: 'pt_PT' })));
      await other.getByRole('heading', { name: 'O pagamento desta encomenda já foi autorizado' }).waitFor();
      await expect(other.locator('.method, form, .pay').count()).resolves.toBe(0);

      const held = await h.getOrder(order.orderId);
      expect(held.status).toBe('pending');
      expect(held.transactions.map((t: { status: string }) => t.status).sort()).toEqual([
        'Denied',
        'Success',
      ]);
      expect(errors).toEqual([]);
    });

    it('an answer the form has no text for (a 4xx it does not know) shows a generic message in the page language', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card', locale: 'pt_PT' });
      // Something in front of the service answers the payment with an error the form does not know.
      await page.route('**/payments', (route) =>
        route.fulfill({
          status: 409,
          contentType: 'application/json',
          body: JSON.stringify({ code: 'BYRD409', description: 'Request in progress', message: 'Busy' }),
        }),
      );
      await page.getByLabel('Número do cartão').pressSequentially(CARDS.frictionless);
      await page.getByLabel('Data de validade').pressSequentially(futureExpiry().replace('/', ''));
      await page.getByLabel('Código de segurança').fill('123');
      await page.getByLabel('Nome no cartão').fill('Ana Silva');
      await page.getByRole('button', { name: /^Pagar/ }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toBe('Ocorreu um erro. Tente novamente.');
    });

    it('an answer lost after the card was charged (connection dropped, 502): the page shows the order paid, not an error', async () => {
      for (const how of ['drop', 502] as const) {
        const order = await h.createOrder();
        let lost = 0;
        const edge = await startLossyEdge(h.bffUrl, (method, path) =>
          method === 'POST' && path.endsWith('/payments') && lost++ === 0 ? how : null,
        );
        try {
          await page.goto(
            formUrl(`${edge.url}/checkout/`, order, configsFor({ defaultPaymentMethod: 'card' })),
          );
          await typeCard(page, CARDS.frictionless);
          await page.getByRole('button', { name: 'Pay €25.00' }).click();
          await page.locator('#closed-title, [role=alert]').first().waitFor({ timeout: 20_000 });
          await expect(page.locator('form, [role=alert]').allTextContents()).resolves.toEqual([]);
          await page
            .getByRole('heading', { name: 'This order has already been paid' })
            .waitFor({ timeout: 15_000 });
          expect(lost).toBe(1);
          expect((await h.waitForOrderStatus(order.orderId, 'paid')).transactions).toHaveLength(1);
        } finally {
          await edge.close();
        }
      }
    });

    it('saves the card when the shopper asks; the merchant then finds the token by its customReference', async () => {
      const customReference = `shopper-${randomUUID()}`;
      const order = await h.createOrder({ paymentOptions: { tokenOptions: { customReference } } });
      await goto(order, { defaultPaymentMethod: 'card', autoRedirect: false });
      await typeCard(page, CARDS.frictionless);
      await page.getByLabel('Save my card for future payments').check();
      await page.getByRole('button', { name: 'Pay €25.00' }).click();
      await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 30_000 });
      await expect(
        page.getByText('Your card •••• 4242 was saved for future payments.').isVisible(),
      ).resolves.toBe(true);

      const tokens = await h.merchantCall(
        h.tokensUrl,
        'GET',
        `/api/v2/tokens?customReference=${encodeURIComponent(customReference)}`,
      );
      expect(tokens.status).toBe(200);
      expect(tokens.body.data).toEqual([
        expect.objectContaining({ customReference, maskedCardNumber: expect.stringMatching(/4242$/) }),
      ]);
    });

    it('works with the keyboard alone: labels, autofill tokens, errors tied to the fields, focus on the first invalid one, announcements', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'card' });
      await page.getByLabel('Card number').waitFor();
      // The live region is in the page from the start, empty, before anything happens.
      await expect(
        page.locator('#announcer').evaluate((el) => [el.getAttribute('aria-live'), el.textContent]),
      ).resolves.toEqual(['polite', '']);
      const attributes = (label: string) =>
        page
          .getByLabel(label)
          .evaluate((el) => [el.getAttribute('autocomplete'), el.getAttribute('inputmode')]);
      await expect(attributes('Card number')).resolves.toEqual(['cc-number', 'numeric']);
      await expect(attributes('Expiry date')).resolves.toEqual(['cc-exp', 'numeric']);
      await expect(attributes('Security code')).resolves.toEqual(['cc-csc', 'numeric']);
      await expect(attributes('Name on card')).resolves.toEqual(['cc-name', null]);

      // Tab order: back to the methods, the four fields, the pay button.
      const order_: string[] = [];
      for (let i = 0; i < 6; i++) {
        await page.keyboard.press('Tab');
        order_.push(
          await page.evaluate(
            () => document.activeElement?.id || document.activeElement?.textContent?.trim() || '',
          ),
        );
      }
      expect(order_).toEqual([
        'Other payment methods',
        'card-number',
        'card-expiry',
        'card-cvv',
        'card-holder',
        'Pay €25.00',
      ]);
      // Focus is visible on a focused field.
      await page.getByLabel('Card number').focus();
      await expect(
        page.getByLabel('Card number').evaluate((el) => getComputedStyle(el).boxShadow),
      ).resolves.not.toBe('none');

      // Submitting the empty form from the keyboard.
      await page.getByRole('button', { name: 'Pay €25.00' }).focus();
      await page.keyboard.press('Enter');
      await expect(focusedId()).resolves.toBe('card-number');
      await announced('There are 4 errors in the form. Enter the card number.');
      const number = page.getByLabel('Card number');
      await expect(number.getAttribute('aria-invalid')).resolves.toBe('true');
      const describedBy = (await number.getAttribute('aria-describedby'))!;
      await expect(page.locator(`#${describedBy.split(' ')[0]}`).textContent()).resolves.toBe(
        'Enter the card number.',
      );

      // Wrong values typed field by field: a Luhn failure, an expired date, a short code.
      await page.keyboard.type('4242424242424241');
      await page.keyboard.press('Tab');
      await page.keyboard.type('0120');
      await page.keyboard.press('Tab');
      await page.keyboard.type('12');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Ana Silva');
      await page.keyboard.press('Enter');
      await expect(focusedId()).resolves.toBe('card-number');
      await announced(
        'There are 3 errors in the form. This card number is not valid. Check it and try again.',
      );
      await expect(page.locator('.field-error').allTextContents()).resolves.toEqual([
        'This card number is not valid. Check it and try again.',
        'This card has expired.',
        'The security code has 3 digits.',
      ]);
      await expect(page.getByLabel('Name on card').getAttribute('aria-invalid')).resolves.toBe('false');
      await page.screenshot({ path: `${shots}card-errors.png` });

      // An American Express number asks for four digits.
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('378282246310005');
      await expect(page.getByLabel('Card number').inputValue()).resolves.toBe('3782 822463 10005');
      await expect(page.getByText('4 digits, on the front of the card').isVisible()).resolves.toBe(true);

      // Corrected from the keyboard and sent with Enter.
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type(CARDS.frictionless);
      await page.keyboard.press('Tab');
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type(futureExpiry().replace('/', ''));
      // Tabbing into a field selects its text: typing replaces it.
      await page.keyboard.press('Tab');
      await page.keyboard.type('123');
      // Each error went away as its field was corrected.
      await expect(page.locator('.field-error').count()).resolves.toBe(0);
      await page.keyboard.press('Enter');
      expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });
      await h.waitForOrderStatus(order.orderId, 'paid');
    });
  });

  describe('configs', () => {
    it('paints the five theme colours (read back from computed styles) and leaves unset ones at the default', async () => {
      await context.close();
      await open({ reducedMotion: 'reduce' });
      const order = await h.createOrder();
      const theme = {
        backgroundColor: '#102030',
        formBackgroundColor: '#fdf6e3',
        primaryColor: '#8a2be2',
        textColor: '#222222',
        effectsBackgroundColor: '#ffe4b5',
      };
      await goto(order, { theme });
      await page.locator('.method').first().waitFor();
      const style = (selector: string, property: string) =>
        page
          .locator(selector)
          .first()
          .evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), property);
      await expect(style('body', 'background-color')).resolves.toBe('rgb(16, 32, 48)');
      await expect(style('.panel', 'background-color')).resolves.toBe('rgb(253, 246, 227)');
      await expect(style('.screen-title', 'color')).resolves.toBe('rgb(34, 34, 34)');
      await page.locator('.method').first().hover();
      await expect(style('.method', 'background-color')).resolves.toBe('rgb(255, 228, 181)');
      await page.locator('.method').first().click();
      await expect(style('.pay', 'background-color')).resolves.toBe('rgb(138, 43, 226)');
      // Text on a dark primary colour is white.
      await expect(style('.pay', 'color')).resolves.toBe('rgb(255, 255, 255)');
      await page.screenshot({ path: `${shots}themed.png` });

      await goto(order, { theme: { primaryColor: '#ffd700', textColor: 'not-a-colour' } });
      await page.locator('.method').first().click();
      await expect(style('.pay', 'background-color')).resolves.toBe('rgb(255, 215, 0)');
      // Dark text on a light primary colour; an invalid colour falls back to the default.
      await expect(style('.pay', 'color')).resolves.toBe('rgb(17, 20, 24)');
      await expect(style('body', 'background-color')).resolves.toBe('rgb(245, 246, 248)');
      await expect(style('.screen-title', 'color')).resolves.toBe('rgb(27, 31, 36)');
    });

    it('compact drops the page background, margins, paddings and the container shadow', async () => {
      const order = await h.createOrder();
      const layout = () =>
        page.evaluate(() => {
          const body = getComputedStyle(document.body);
          const pageBox = getComputedStyle(document.querySelector('.page')!);
          const panel = getComputedStyle(document.querySelector('.panel')!);
          return {
            background: body.backgroundColor,
            margin: body.margin,
            pagePadding: pageBox.padding,
            panelPadding: panel.padding,
            shadow: panel.boxShadow,
          };
        });
      await goto(order);
      await page.locator('.method').first().waitFor();
      const normal = await layout();
      expect(normal.background).toBe('rgb(245, 246, 248)');
      expect(normal.panelPadding).not.toBe('0px');
      expect(normal.shadow).not.toBe('none');

      await goto(order, {
        compact: true,
        theme: { primaryColor: '#0f766e', formBackgroundColor: '#f0fdfa' },
      });
      await page.locator('.method').first().waitFor();
      await expect(layout()).resolves.toEqual({
        background: 'rgba(0, 0, 0, 0)',
        margin: '0px',
        pagePadding: '0px',
        panelPadding: '0px',
        shadow: 'none',
      });
      await page.screenshot({ path: `${shots}compact-themed.png` });
    });

    it('speaks the five locales (texts, amount format, <html lang>); unknown ones fall back to English', async () => {
      const order = await h.createOrder();
      const cases: [unknown, string, string, string, string][] = [
        ['en_US', 'en-US', 'Choose how to pay', '€25.00', 'Test mode: no real payment will be made'],
        [
          'pt_PT',
          'pt-PT',
          'Escolha como pagar',
          '25,00 €',
          'Modo de teste: não será feito nenhum pagamento real',
        ],
        [
          'pt-BR',
          'pt-BR',
          'Escolha como pagar',
          '€ 25,00',
          'Modo de teste: nenhum pagamento real será feito',
        ],
        ['es_ES', 'es-ES', 'Elige cómo pagar', '25,00 €', 'Modo de prueba: no se realizará ningún pago real'],
        [
          'fr_FR',
          'fr-FR',
          'Choisissez votre moyen de paiement',
          '25,00 €',
          'Mode test : aucun paiement réel ne sera effectué',
        ],
        ['de_DE', 'en-US', 'Choose how to pay', '€25.00', 'Test mode: no real payment will be made'],
      ];
      const seen: string[][] = [];
      for (const [locale] of cases) {
        await goto(order, { locale });
        await page.locator('.method').first().waitFor();
        const text = async (selector: string) =>
          (await page.locator(selector).first().textContent())!.replace(/\s/g, ' ');
        seen.push([
          await page.evaluate(() => document.documentElement.lang),
          await text('.screen-title'),
          (await text('.amount')).replace(/^[^:]*: /, ''),
          await text('.test-banner'),
        ]);
        if (locale === 'pt_PT') await page.screenshot({ path: `${shots}methods-pt-PT.png` });
      }
      expect(seen).toEqual(cases.map(([, lang, title, amount, banner]) => [lang, title, amount, banner]));

      // Deeper in: the card form in French.
      await goto(order, { locale: 'fr_FR', defaultPaymentMethod: 'card' });
      await page.getByLabel('Numéro de carte').pressSequentially('4242');
      await page.getByRole('button', { name: 'Payer 25,00 €' }).click();
      await expect(page.locator('.field-error').first().textContent()).resolves.toBe(
        'Ce numéro de carte n’est pas valide. Vérifiez-le et réessayez.',
      );
    });

    it('cancel (showCancelButton) cancels the order and sends the shopper to redirectUrl', async () => {
      const order = await h.createOrder();
      await goto(order, { showCancelButton: true });
      await page.getByRole('button', { name: 'Cancel payment' }).click();
      await expect(page.getByText('Cancel this order and return to Acme Shop?').isVisible()).resolves.toBe(
        true,
      );
      await page.getByRole('button', { name: 'Yes, cancel' }).click();
      expect(await backAtShop()).toEqual({ orderId: order.orderId, status: 'canceled' });
      await expect(h.getOrder(order.orderId)).resolves.toMatchObject({ status: 'canceled' });
      expect(errors).toEqual([]);
    });

    it('follows the four defaultPaymentMethod rules', async () => {
      // A default that is not available: the list.
      const cardAndMbway = await h.createOrder({
        paymentOptions: { allowedPaymentMethods: ['card', 'mbway'] },
      });
      await goto(cardAndMbway, { defaultPaymentMethod: 'multibanco' });
      await page.locator('.method').first().waitFor();
      await expect(heading()).resolves.toBe('Choose how to pay');
      await expect(page.locator('.method-name').allTextContents()).resolves.toEqual(['Card', 'MB WAY']);

      // One method only: straight to it, with nothing to go back to.
      const multibancoOnly = await h.createOrder({
        paymentOptions: { allowedPaymentMethods: ['multibanco'] },
      });
      await goto(multibancoOnly);
      await page.getByRole('button', { name: 'Get payment reference' }).waitFor();
      await expect(heading()).resolves.toBe('Pay with Multibanco');
      await expect(page.getByRole('button', { name: 'Other payment methods' }).count()).resolves.toBe(0);

      // A default among several: opened, with a way back to the list.
      await goto(cardAndMbway, { defaultPaymentMethod: 'mbway' });
      await page.getByLabel('Phone number').waitFor();
      await expect(heading()).resolves.toBe('Pay with MB WAY');
      await page.getByRole('button', { name: 'Other payment methods' }).click();
      await expect(heading()).resolves.toBe('Choose how to pay');
      // Moving between screens puts the focus on the new screen's title (in the frame after the
      // screen renders, so wait for it rather than read it at once).
      await page.waitForFunction(() => document.activeElement?.textContent === 'Choose how to pay', null, {
        timeout: 5_000,
      });

      // No default: the list.
      await goto(cardAndMbway);
      await page.locator('.method').first().waitFor();
      await expect(heading()).resolves.toBe('Choose how to pay');
    });

    it('skipATMSuccessPage sends the shopper to redirectUrl instead of showing the Multibanco reference', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'multibanco', skipATMSuccessPage: true });
      const payment = nextPayment();
      await page.getByRole('button', { name: 'Get payment reference' }).click();
      const { transactionId, status } = await payment;
      expect(await backAtShop()).toEqual({ orderId: order.orderId, transactionId, status });
      await h.waitForOrderStatus(order.orderId, 'pending');
    });
  });

  describe('multibanco and MB WAY', () => {
    it('multibanco: shows entity, reference and amount with copy buttons; the order is paid once the reference is', async () => {
      await context.close();
      await open({ permissions: ['clipboard-read', 'clipboard-write'] });
      const order = await h.createOrder();
      await goto(order);
      await page.getByRole('button', { name: /^Multibanco/ }).click();
      const payment = nextPayment();
      await page.getByRole('button', { name: 'Get payment reference' }).click();
      const { transactionId, multibanco, status } = await payment;
      await page.getByRole('heading', { name: 'Your Multibanco reference' }).waitFor();
      const value = (field: string) => page.locator(`[data-field="${field}"]`).textContent();
      await expect(value('entity')).resolves.toBe(multibanco.entity);
      await expect(value('reference')).resolves.toBe(multibanco.reference.replace(/(\d{3})(?=\d)/g, '$1 '));
      await expect(value('amount')).resolves.toBe('€25.00');
      await page.getByRole('button', { name: 'Copy reference' }).click();
      await page.getByRole('button', { name: 'Reference copied' }).waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(multibanco.reference);
      await page.screenshot({ path: `${shots}multibanco-reference.png` });

      await page.getByRole('button', { name: 'Return to Acme Shop' }).click();
      expect(await backAtShop()).toEqual({ orderId: order.orderId, transactionId, status });
      expect((await h.simulateAsyncPayment(transactionId, 'pay')).status).toBe(200);
      await h.waitForOrderStatus(order.orderId, 'paid');
      expect(errors).toEqual([]);
    });

    it('MB WAY on a phone: number, then a waiting page that follows the payment until the shopper accepts', async () => {
      await context.close();
      await open({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'mbway' });
      const phone = page.getByLabel('Phone number');
      await expect(
        phone.evaluate((el) => [el.getAttribute('type'), el.getAttribute('autocomplete')]),
      ).resolves.toEqual(['tel', 'tel']);
      await phone.fill('212 345 678');
      await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
      await expect(page.locator('.field-error').textContent()).resolves.toBe(
        'Enter a valid mobile number, e.g. 912 345 678.',
      );
      await phone.fill('912 345 678');
      const payment = nextPayment();
      await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
      const { transactionId } = await payment;
      await page.getByRole('heading', { name: 'Confirm in the MB WAY app' }).waitFor();
      await expect(
        page
          .getByText(
            'We sent a payment request of €25.00 to +351 912 345 678. Open the MB WAY app and accept it.',
          )
          .isVisible(),
      ).resolves.toBe(true);
      // Nothing wider than the phone's screen.
      await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(
        390,
      );
      await page.screenshot({ path: `${shots}mbway-waiting-phone.png` });

      expect((await h.simulateAsyncPayment(transactionId, 'pay')).status).toBe(200);
      expect(await backAtShop()).toEqual({ orderId: order.orderId, transactionId, status: 'Success' });
      await h.waitForOrderStatus(order.orderId, 'paid');
    });

    it('MB WAY waiting in one tab while another pays by card: the waiting tab shows the order paid and stays', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'mbway' });
      const left: string[] = [];
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame() && frame.url().startsWith(shop.returnUrl)) left.push(frame.url());
      });
      await page.getByLabel('Phone number').fill('912 345 678');
      const request = nextPayment();
      await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
      const mbway = await request;
      await page.getByRole('heading', { name: 'Confirm in the MB WAY app' }).waitFor();

      const other = await context.newPage();
      await other.goto(formUrl(h.checkoutUrl, order, configsFor({ defaultPaymentMethod: 'card' })));
      await typeCard(other, CARDS.frictionless);
      await other.getByRole('button', { name: 'Pay €25.00' }).click();
      await other.waitForURL((url) => url.href.startsWith(shop.returnUrl), { timeout: 30_000 });

      // Paying by card voided the MB WAY request (Canceled): the waiting tab reads the order.
      await page
        .getByRole('heading', { name: 'This order has already been paid' })
        .waitFor({ timeout: 20_000 });
      await page.waitForTimeout(PAGE_TIMINGS.leaveDelayMs * 3); // longer than the page waits before leaving for the shop
      expect(left).toEqual([]);
      const back = new URL(
        (await page.getByRole('link', { name: 'Return to Acme Shop' }).getAttribute('href'))!,
      );
      expect(Object.fromEntries(back.searchParams)).toEqual({ orderId: order.orderId, status: 'paid' });
      await h.waitForOrderStatus(order.orderId, 'paid');
      const voided = await h.api(
        'GET',
        `/checkout/api/v2/orders/${order.orderId}/payments/${mbway.transactionId}`,
        undefined,
        order.checkoutKey,
      );
      expect(voided.body).toMatchObject({ status: 'Canceled', code: 'BYRD205' });
      expect(errors).toEqual([]);
    });

    it('MB WAY refused with autoRedirect off: the landing page says so and the shopper can try again', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'mbway', autoRedirect: false });
      await page.getByLabel('Phone number').fill('+351 962 345 678');
      const payment = nextPayment();
      await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
      const { transactionId } = await payment;
      await page.getByRole('heading', { name: 'Confirm in the MB WAY app' }).waitFor();
      expect((await h.simulateAsyncPayment(transactionId, 'refuse')).status).toBe(200);
      await page.getByRole('heading', { name: 'Payment not completed' }).waitFor({ timeout: 15_000 });
      await expect(
        page
          .getByText('The MB WAY payment was not completed: it was declined or the request expired.')
          .isVisible(),
      ).resolves.toBe(true);
      await page.getByRole('button', { name: 'Try again' }).click();
      await expect(heading()).resolves.toBe('Pay with MB WAY');
      await expect(h.getOrder(order.orderId)).resolves.not.toMatchObject({ status: 'paid' });

      // Trying again with the same phone is a new request to it, not the refused one answered again.
      await page.getByLabel('Phone number').fill('+351 962 345 678');
      const again = nextPayment();
      await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
      const retried = await again;
      expect(retried).toMatchObject({ status: 'Processing' });
      expect(retried.transactionId).not.toBe(transactionId);
      await page.getByRole('heading', { name: 'Confirm in the MB WAY app' }).waitFor();
      expect((await h.simulateAsyncPayment(retried.transactionId, 'pay')).status).toBe(200);
      await h.waitForOrderStatus(order.orderId, 'paid');
    });

    it('an MB WAY answer lost after the request went out: sending again (also after a reload) shows that one request, none other reaches the phone', async () => {
      for (const reload of [false, true]) {
        const order = await h.createOrder();
        let posts = 0;
        const edge = await startLossyEdge(h.bffUrl, (method, path) =>
          method === 'POST' && path.endsWith('/payments') && posts++ === 0 ? 'drop' : null,
        );
        try {
          await page.goto(
            formUrl(`${edge.url}/checkout/`, order, configsFor({ defaultPaymentMethod: 'mbway' })),
          );
          await page.getByLabel('Phone number').fill('912 345 678');
          await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
          await page.getByRole('alert').waitFor({ timeout: 20_000 });
          // The BFF did send it: the phone has its request.
          const [sent] = await h.transactionsOf(order.orderId);
          expect(sent).toMatchObject({ status: 'Processing' });
          if (reload) {
            await page.reload();
            await page.getByLabel('Phone number').fill('912 345 678');
          }
          const payment = nextPayment();
          await page.getByRole('button', { name: 'Send request to MB WAY' }).click();
          await expect(payment).resolves.toMatchObject({ transactionId: sent.transactionId });
          await page.getByRole('heading', { name: 'Confirm in the MB WAY app' }).waitFor();
          expect(posts).toBe(2);
          expect((await h.transactionsOf(order.orderId)).map((t) => t.transactionId)).toEqual([
            sent.transactionId,
          ]);
          expect((await h.simulateAsyncPayment(sent.transactionId, 'pay')).status).toBe(200);
          expect(await backAtShop()).toEqual({
            orderId: order.orderId,
            transactionId: sent.transactionId,
            status: 'Success',
          });
        } finally {
          await edge.close();
        }
      }
    });
  });

  describe('orders that cannot be paid, and links that do not work', () => {
    const payByApi = async (order: Record<string, any>) => {
      const answer = await h.api(
        'POST',
        `/checkout/api/v2/orders/${order.orderId}/payments`,
        {
          type: 'card',
          card: { number: CARDS.frictionless, expiration: futureExpiry(), cvv: '123', holder: 'Ana' },
        },
        order.checkoutKey,
      );
      expect(answer.status).toBe(201);
    };

    it('a paid, a canceled and an expired order each show a clear page and no form', async () => {
      const paid = await h.createOrder();
      await payByApi(paid);
      await h.waitForOrderStatus(paid.orderId, 'paid');
      const canceled = await h.createOrder();
      expect(
        (await h.api('POST', `/checkout/api/v2/orders/${canceled.orderId}/cancel`, {}, canceled.checkoutKey))
          .status,
      ).toBe(200);
      const expired = await h.createOrder({ expiresIn: '00:00:01' });
      await h.waitForOrderStatus(expired.orderId, 'expired');

      for (const [order, title, status, shot] of [
        [paid, 'This order has already been paid', 'paid', 'closed-paid.png'],
        [canceled, 'This order was canceled', 'canceled', 'closed-canceled.png'],
        [expired, 'This order has expired', 'expired', null],
      ] as const) {
        await goto(order);
        await page.getByRole('heading', { name: title }).waitFor();
        await expect(page.locator('.method, form, .pay').count()).resolves.toBe(0);
        const back = new URL(
          (await page.getByRole('link', { name: 'Return to Acme Shop' }).getAttribute('href'))!,
        );
        expect(`${back.origin}${back.pathname}`).toBe(shop.returnUrl);
        expect(Object.fromEntries(back.searchParams)).toEqual({ orderId: order.orderId, status });
        if (shot) await page.screenshot({ path: `${shots}${shot}` });
      }
    });

    it('an open order no method here can pay says so, and a USD order opens on card alone', async () => {
      const paypalOnly = await h.createOrder({ paymentOptions: { allowedPaymentMethods: ['paypal'] } });
      // Multibanco in USD: payments would refuse it, so the form offers nothing.
      const multibancoInUsd = await h.createOrder({
        currency: 'USD',
        paymentOptions: { allowedPaymentMethods: ['multibanco'] },
      });
      for (const order of [paypalOnly, multibancoInUsd]) {
        await goto(order);
        await page.getByRole('heading', { name: 'No payment method is available for this order' }).waitFor();
        await expect(page.getByText('A payment for this order is in progress').count()).resolves.toBe(0);
        await expect(page.locator('.method, form, .pay').count()).resolves.toBe(0);
        const back = new URL(
          (await page.getByRole('link', { name: 'Return to Acme Shop' }).getAttribute('href'))!,
        );
        expect(Object.fromEntries(back.searchParams)).toEqual({ orderId: order.orderId, status: 'created' });
      }
      await page.screenshot({ path: `${shots}closed-no-method.png` });

      // A USD order: card is its only method, so the form opens on it.
      await goto(await h.createOrder({ currency: 'USD' }));
      await expect(heading()).resolves.toBe('Pay by card');
      await expect(page.locator('button.back').count()).resolves.toBe(0);

      // An order asking for a pre-authorisation: Multibanco and MB WAY would settle it in full, so
      // card is its only method, even when Multibanco is the link's default.
      await goto(await h.createOrder({ paymentOptions: { cardOptions: { isPreAuth: true } } }), {
        defaultPaymentMethod: 'multibanco',
      });
      await expect(heading()).resolves.toBe('Pay by card');
      await expect(page.locator('button.back, .method').count()).resolves.toBe(0);
    });

    it('an order canceled while the shopper is on the form: the attempt to pay shows the closed page', async () => {
      const order = await h.createOrder();
      await goto(order, { defaultPaymentMethod: 'multibanco' });
      await page.getByRole('button', { name: 'Get payment reference' }).waitFor();
      expect(
        (await h.api('POST', `/checkout/api/v2/orders/${order.orderId}/cancel`, {}, order.checkoutKey))
          .status,
      ).toBe(200);
      await page.getByRole('button', { name: 'Get payment reference' }).click();
      await page.getByRole('heading', { name: 'This order was canceled' }).waitFor();
      await expect(page.locator('.method, form, .pay').count()).resolves.toBe(0);
    });

    it('a configs that does not match the link, or a wrong checkout key, shows an error page', async () => {
      const order = await h.createOrder();
      await page.goto(formUrl(h.checkoutUrl, order, { redirectUrl: shop.returnUrl, orderId: randomUUID() }));
      await page.getByRole('heading', { name: 'This payment link is not valid' }).waitFor();
      await page.getByText('Technical details').click();
      await expect(
        page.getByText('configs.orderId does not match the orderId query parameter').isVisible(),
      ).resolves.toBe(true);

      await page.goto(
        formUrl(h.checkoutUrl, { orderId: order.orderId, checkoutKey: randomUUID() }, configsFor()),
      );
      await page.getByRole('heading', { name: 'We couldn’t find this order' }).waitFor();
      await page.screenshot({ path: `${shots}not-found.png` });

      // Without configs the order's own redirectUrl is used and the form works.
      await page.goto(formUrl(h.checkoutUrl, order, null));
      await expect(heading()).resolves.toBe('Choose how to pay');
    });
  });

  it('pays an order and link without any redirectUrl (a link sent by mail) and keeps the outcome on its own page', async () => {
    const order = await h.createOrder({ orderOptions: {} });
    await page.goto(formUrl(h.checkoutUrl, order, { defaultPaymentMethod: 'card' }));
    await typeCard(page, CARDS.frictionless);
    await page.getByRole('button', { name: 'Pay €25.00' }).click();
    await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 30_000 });
    await expect(page.getByText('You paid €25.00 to Acme Shop.').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: /^Return to/ }).count()).resolves.toBe(0);
    await h.waitForOrderStatus(order.orderId, 'paid');
    await page.waitForTimeout(1_500); // past the page's leave delay: it stays
    expect(new URL(page.url()).pathname).toBe('/checkout/');

    // A Multibanco reference is shown even when the link asks to skip it: there is nowhere else to go.
    const atm = await h.createOrder({ orderOptions: {} });
    await page.goto(
      formUrl(h.checkoutUrl, atm, { defaultPaymentMethod: 'multibanco', skipATMSuccessPage: true }),
    );
    await page.getByRole('button', { name: 'Get payment reference' }).click();
    await page.getByRole('heading', { name: 'Your Multibanco reference' }).waitFor();
    await expect(page.getByRole('button', { name: /^Return to/ }).count()).resolves.toBe(0);
    expect(errors).toEqual([]);
  });

  it("ignores a configs.redirectUrl outside the merchant's checkout origins: the shopper returns to the order's own", async () => {
    const order = await h.createOrder({ orderOptions: { redirectUrl: `${shop.returnUrl}?via=order` } });
    await page.goto(
      formUrl(h.checkoutUrl, order, {
        redirectUrl: 'https://phishing.example/return',
        defaultPaymentMethod: 'card',
      }),
    );
    await typeCard(page, CARDS.frictionless);
    await page.getByRole('button', { name: 'Pay €25.00' }).click();
    expect(await backAtShop()).toMatchObject({ via: 'order', orderId: order.orderId, status: 'Success' });
  });

  it("pays inside the merchant's iframe (another origin), challenge included, and the whole tab returns to the shop", async () => {
    const order = await h.createOrder();
    await page.goto(
      shop.embedUrl(formUrl(h.checkoutUrl, order, configsFor({ defaultPaymentMethod: 'card' }))),
    );
    const form = page.frameLocator('iframe[title="Payment"]');
    const frame = page.frame({ url: (url) => url.pathname.startsWith('/checkout/') })!;
    await form.getByLabel('Card number').waitFor();
    // Framed, the form moved to its order's own page, which only the order's merchant may frame.
    expect(new URL(frame.url()).pathname).toBe(`/checkout/o/${order.orderId}/`);
    await typeCard(frame, CARDS.challenge);
    await form.getByRole('button', { name: 'Pay €25.00' }).click();
    await answerChallenge(frame, GOOD_OTP, () => page.screenshot({ path: `${shots}iframe-challenge.png` }));
    expect(await backAtShop()).toMatchObject({ orderId: order.orderId, status: 'Success' });
    // The embedding page (an allowed origin) was told before the tab moved on.
    const told = JSON.parse((await page.evaluate(() => sessionStorage.getItem('byrd-checkout'))) ?? 'null');
    expect(told).toMatchObject({
      type: 'byrd-checkout',
      event: 'redirect',
      orderId: order.orderId,
      status: 'Success',
    });
    await h.waitForOrderStatus(order.orderId, 'paid');
    expect(errors).toEqual([]);
  });

  describe("inside a frame of a site its merchant's checkout origins do not list", () => {
    let stranger: Shop;
    beforeAll(async () => {
      stranger = await startShop(); // another origin, which CHECKOUT_FRAME_ANCESTORS would allow
    });
    afterAll(() => stranger?.close());

    const cardLink = (order: { orderId: string; checkoutKey: string }) =>
      formUrl(h.checkoutUrl, order, configsFor({ defaultPaymentMethod: 'card' }));
    /** Waits for Chromium's refusal of the order's page in the stranger's frame; no card field shows. */
    const expectRefused = async () => {
      const refused = () => errors.some((error) => error.includes('frame-ancestors'));
      for (const deadline = Date.now() + 10_000; !refused() && Date.now() < deadline;) {
        await page.waitForTimeout(100);
      }
      expect(await page.frameLocator('iframe[title="Payment"]').getByLabel('Card number').count()).toBe(0);
      expect(errors.join('\n')).toMatch(
        /violates the following Content Security Policy directive: "frame-ancestors 'self' https:\/\/shop\.example\.com http:\/\/127\.0\.0\.1:\d+"/,
      );
    };

    it('is refused', async () => {
      const order = await h.createOrder();
      await page.goto(stranger.embedUrl(cardLink(order)));
      await expectRefused();
    });

    it('is refused when a second "?" follows the orderId in the fragment', async () => {
      const order = await h.createOrder();
      const link = `${cardLink(order).replace(`orderId=${order.orderId}&`, '')}&orderId=${order.orderId}?`;
      await page.goto(stranger.embedUrl(link));
      await expectRefused();
    });

    it('is refused when the framing page changes only the fragment of a form it framed', async () => {
      const order = await h.createOrder();
      await page.goto(stranger.embedUrl(`${h.checkoutUrl}#x`));
      const frame = page.frameLocator('iframe[title="Payment"]');
      await frame.getByRole('heading', { name: 'This payment link is not valid' }).waitFor();
      // Same document, new fragment: no new page loads, so no new CSP applies by itself.
      await page.evaluate((src) => {
        document.querySelector('iframe')!.src = src;
      }, cardLink(order));
      await expectRefused();
    });
  });

  it('is refused inside a frame of a site CHECKOUT_FRAME_ANCESTORS does not list', async () => {
    const order = await h.createOrder();
    // The same shop as http://localhost:<port>: an origin this run's frame-ancestors does not list.
    const elsewhere = shop.embedUrl(formUrl(h.checkoutUrl, order)).replace('//127.0.0.1:', '//localhost:');
    await page.goto(elsewhere);
    const refused = () => errors.some((error) => error.includes('frame-ancestors'));
    for (const deadline = Date.now() + 10_000; !refused() && Date.now() < deadline;) {
      await page.waitForTimeout(100);
    }
    expect(errors.join('\n')).toMatch(
      /violates the following Content Security Policy directive: "frame-ancestors .*blocked/,
    );
    expect(await page.frameLocator('iframe[title="Payment"]').getByRole('heading').count()).toBe(0);
  });
});
