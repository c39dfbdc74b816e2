import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { futureExpiry } from '@byrd/platform/testing';
import {
  ByrdApiError,
  ByrdClient,
  ByrdConnectionError,
  listen,
  shopperAction,
  verifyWebhook,
  WebhookVerificationError,
  type CreatePaymentRequest,
  type WebhookSettings,
} from '../src/index.js';
import { runCli } from '../src/cli/main.js';
import { FlakyNetwork } from './flaky-network.js';
import { answerChallenge } from './shopper.js';
import { startStack, type Stack } from './stack.js';
import { WebhookReceiver } from './webhook-receiver.js';

const card = (number: string) => ({ number, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' });
const FRICTIONLESS = '5448280000000007';
const VISA = '4242424242424242';
const CHALLENGE = '5555341244441115';
/** Approved by the issuer, but the acquirer's answer is lost: TemporaryFailed until the recovery. */
const ACQUIRER_TIMEOUT = '5201282999005515';
const FAST_RETRIES = { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 200 };

async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** The thrown error of `call`, typed. */
async function failureOf(call: Promise<unknown>): Promise<ByrdApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ByrdApiError)) throw new Error(`expected a ByrdApiError, got ${String(error)}`);
  return error;
}

describe('@byrd/client against the running platform', () => {
  let stack: Stack;
  let byrd: ByrdClient;
  let receiver: WebhookReceiver;
  let setting: WebhookSettings;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([startStack(), new WebhookReceiver().start()]);
    byrd = new ByrdClient({ apiKey: stack.merchant.apiKey, baseUrl: stack.url, retry: FAST_RETRIES });
    // Subscribed first, so every event of the tests below is delivered to the receiver.
    setting = await byrd.webhooks.settings.create({ url: receiver.url, credentialType: 'api-key' });
  }, 150_000);

  afterAll(async () => {
    await receiver?.stop();
    await stack?.stop();
  });

  it('creates an order and pays it by card; the order reads paid', async () => {
    const order = await byrd.orders.create({ amount: '25.00', currency: 'EUR', orderRef: 'client-order-1' });
    expect(order).toMatchObject({ status: 'created', amount: '25.00', isoAmount: 2500, code: 'BYRD200' });
    expect(order.checkoutUrl).toContain(order.checkoutKey);

    const payment = await byrd.payments.create({
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: order.orderId,
      card: card(FRICTIONLESS),
    });
    expect(payment).toMatchObject({ code: 'BYRD200', status: 'Success', brand: 'MASTER' });
    expect(shopperAction(payment)).toBeNull();

    const paid = await eventually(
      () => byrd.orders.get(order.orderId),
      (o) => o.status === 'paid',
    );
    expect(paid.status).toBe('paid');
    expect(paid.lastTransactionId).toBe(payment.transactionId);
  });

  it('pre-authorises, captures part, refunds part and releases another pre-authorisation', async () => {
    const preAuth = await byrd.payments.create({
      type: 'card',
      amount: '100.00',
      currency: 'EUR',
      isPreAuth: true,
      card: card(VISA),
    });
    expect(preAuth).toMatchObject({ status: 'Success', isPreAuth: true });

    const capture = await byrd.payments.capture(preAuth.transactionId, { isoAmount: 6000 });
    expect(capture).toMatchObject({ code: 'BYRD200', isoAmount: 6000 });
    expect(capture.sourceTransaction).toMatchObject({ isoCapturedAmount: 6000, isoRemainingAmount: 4000 });

    const refund = await byrd.payments.refund(capture.transactionId, { amount: '35.00' });
    expect(refund).toMatchObject({ code: 'BYRD200', isoAmount: 3500 });
    expect(refund.sourceTransaction).toMatchObject({ isoRefundedAmount: 3500, isoRemainingAmount: 2500 });

    const other = await byrd.payments.create({
      type: 'card',
      isoAmount: 5000,
      currency: 'EUR',
      isPreAuth: true,
      card: card(VISA),
    });
    const release = await byrd.payments.release(other.transactionId);
    expect(release).toMatchObject({ code: 'BYRD200', status: 'Success' });
    expect(release.sourceTransaction.isoReleasedAmount).toBe(5000);
    expect(await byrd.transactions.get(release.transactionId)).toMatchObject({ operationType: 'Release' });
  });

  it('throws typed errors with the body of the platform: code, description, message, fields, requestId', async () => {
    const invalid = await failureOf(byrd.orders.create({ amount: 'ten', currency: 'EURO' }));
    expect(invalid).toMatchObject({ status: 400, code: 'BYRD900', description: 'Invalid input' });
    expect(invalid.errors.map((e) => e.field).sort()).toEqual(['amount', 'currency']);
    expect(invalid.message).toMatch(/amount/);
    expect(invalid.requestId).toMatch(/^[0-9a-f-]{36}$/);

    const payment = await byrd.payments.create({
      type: 'card',
      amount: '40.00',
      currency: 'EUR',
      card: card(VISA),
    });
    const overRefund = await failureOf(byrd.payments.refund(payment.transactionId, { amount: '40.01' }));
    expect(overRefund).toMatchObject({ status: 422, code: 'BYRD231' });

    const missing = await failureOf(byrd.transactions.get(randomUUID()));
    expect(missing).toMatchObject({ status: 404, code: 'BYRD901' });

    const stranger = new ByrdClient({ apiKey: randomUUID(), baseUrl: stack.url, retry: false });
    expect(await failureOf(stranger.orders.get(randomUUID()))).toMatchObject({
      status: 401,
      code: 'BYRD401',
    });
  });

  it('hands back the 3D Secure redirect of a challenged card, and waits for it and for async methods to settle', async () => {
    const challenged = await byrd.payments.create({
      type: 'card',
      amount: '30.00',
      currency: 'EUR',
      redirectUrl: 'https://shop.example.com/return',
      card: card(CHALLENGE),
    });
    expect(challenged).toMatchObject({ code: 'BYRD207', status: 'Created' });
    const action = shopperAction(challenged);
    expect(action?.url.startsWith(`${stack.url}/3ds/`)).toBe(true);
    const page = await fetch(action!.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect((await byrd.transactions.get(challenged.transactionId)).status).toBe('Created');

    // The shopper types the code on that page: the payment completes, and the redirect reports it.
    await answerChallenge(stack.url, challenged.threeDSecure!.id, '1234');
    const authenticated = await byrd.transactions.waitForOutcome(challenged.transactionId, {
      intervalMs: 100,
    });
    expect(authenticated).toMatchObject({ status: 'Success', threeDSecure: { status: 'Authorized' } });
    const landing = await fetch(action!.url, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe(
      `https://shop.example.com/return?transactionId=${challenged.transactionId}&status=Success`,
    );

    const multibanco = await byrd.payments.create({ type: 'multibanco', amount: '12.00', currency: 'EUR' });
    expect(multibanco).toMatchObject({ code: 'BYRD201', status: 'Processing' });
    expect(multibanco.multibanco?.reference).toMatch(/^\d{9}$/);
    await byrd.sandbox.simulatePayment(multibanco.transactionId, 'pay');
    const settled = await byrd.transactions.waitForOutcome(multibanco.transactionId, { intervalMs: 100 });
    expect(settled).toMatchObject({ status: 'Success', code: 'BYRD200' });
  });

  it('waits through TemporaryFailed (the acquirer answer lost) for the outcome the recovery settles', async () => {
    const payment = await byrd.payments.create({
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      card: card(ACQUIRER_TIMEOUT),
    });
    expect(payment).toMatchObject({ code: 'BYRD203', status: 'TemporaryFailed' });
    // Payments' recovery asks the acquirer after ACQUIRER_RECOVERY_AFTER_MS (4 s here): it approved.
    const settled = await byrd.transactions.waitForOutcome(payment.transactionId, { intervalMs: 250 });
    expect(settled).toMatchObject({ transactionId: payment.transactionId, status: 'Success' });
  });

  it('charges a two-step payment, keeps checkout origins and moves a sandbox chargeback', async () => {
    const created = await byrd.payments.create({ type: 'card', amount: '22.00', currency: 'EUR' });
    expect(created).toMatchObject({ code: 'BYRD010', status: 'Created' });
    const paid = await byrd.payments.pay(created.transactionId, { card: card(VISA) });
    expect(paid).toMatchObject({ transactionId: created.transactionId, status: 'Success' });

    expect(await byrd.checkoutOrigins.set(['https://shop.example.com/'])).toEqual([
      'https://shop.example.com',
    ]);
    expect(await byrd.checkoutOrigins.get()).toEqual(['https://shop.example.com']);

    const chargeback = await byrd.sandbox.openChargeback({
      transactionId: paid.transactionId,
      reason: 'fraud',
    });
    expect(chargeback).toMatchObject({ status: 'Created', isoAmount: 2200 });
    const disputing = await byrd.sandbox.moveChargeback(chargeback.chargebackId, 'disputing');
    expect(disputing.status).toBe('Disputing');
    expect((await byrd.sandbox.getChargeback(chargeback.chargebackId)).status).toBe('Disputing');
  });

  it('stores a card as a token, charges it, lists it and deletes it', async () => {
    const customReference = `customer-${randomUUID()}`;
    const unverified = await byrd.tokens.create({ CustomReference: customReference, Card: card(VISA) });
    expect(shopperAction(unverified)?.type).toBe('redirect');

    const token = await byrd.tokens.create({
      Type: 'Card',
      CustomReference: customReference,
      Alias: 'Ana card',
      Card: {
        ...card(FRICTIONLESS),
        eci: '02',
        aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
        dsTransactionId: randomUUID(),
      },
    });
    expect(token).toMatchObject({ code: 'BYRD200', action: null, alias: 'Ana card' });
    expect(token.card.number).toBe('544828******0007');

    expect(await byrd.tokens.get(token.tokenId)).toMatchObject({ brand: 'MASTER', isExpired: false });
    const charged = await byrd.payments.create({
      type: 'card',
      amount: '15.00',
      currency: 'EUR',
      tokenId: token.tokenId,
      transactionMode: 'merchantInitiatedRecurring',
    });
    expect(charged).toMatchObject({ status: 'Success' });

    const listed = await collect(byrd.tokens.listAll({ customReference, pageSize: 1 }));
    expect(listed.map((t) => t.tokenId).sort()).toEqual([unverified.tokenId, token.tokenId].sort());

    await byrd.tokens.delete(token.tokenId);
    expect(await failureOf(byrd.tokens.get(token.tokenId))).toMatchObject({ status: 404, code: 'BYRD901' });
  });

  it('pages through transactions and webhooks with async iterators', async () => {
    const orderRef = `paging-${randomUUID()}`;
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const payment = await byrd.payments.create({
        type: 'card',
        isoAmount: 1100 + i,
        currency: 'EUR',
        orderRef,
        card: card(VISA),
      });
      created.push(payment.transactionId);
    }
    const firstPage = await byrd.transactions.list({ orderRef, pageSize: 2 });
    expect(firstPage.pagination).toMatchObject({ pageNumber: 1, pageSize: 2, total: 2, totalAvailable: 5 });
    // Newest first, every one exactly once, over three pages.
    const all = await collect(byrd.transactions.listAll({ orderRef, pageSize: 2 }));
    expect(all.map((t) => t.transactionId)).toEqual([...created].reverse());

    const webhooks = await eventually(
      () => byrd.webhooks.list({ referenceId: created[0] }),
      (page) => page.totalItemCount >= 1,
    );
    expect(webhooks.data[0].referenceIds).toContain(created[0]);
    const page = await byrd.webhooks.list({ pageSize: 3 });
    expect(page).toMatchObject({ page: 1, pageSize: 3 });
    expect(page.pageCount).toBe(Math.ceil(page.totalItemCount / 3));
    const everyWebhook = await collect(byrd.webhooks.listAll({ pageSize: 3 }));
    expect(everyWebhook.length).toBeGreaterThanOrEqual(page.totalItemCount);
    expect(new Set(everyWebhook.map((w) => w.id)).size).toBe(everyWebhook.length);
  });

  it('receives a real signed delivery that verifyWebhook accepts, and refuses it tampered; resend delivers it again', async () => {
    const order = await byrd.orders.create({ amount: '19.00', currency: 'EUR' });
    const delivery = await receiver.waitFor((w) => w.rawBody.includes(order.orderId));
    const verified = verifyWebhook({
      body: delivery.rawBody,
      headers: delivery.headers,
      signingSecret: setting.signingSecret,
      credential: setting.credential,
    });
    expect(verified).toMatchObject({ event: 'order.created', settingsId: setting.id });
    expect(verified.content).toMatchObject({ orderId: order.orderId });

    const tampered = delivery.rawBody.replace('"19.00"', '"1.00"');
    expect(tampered).not.toBe(delivery.rawBody);
    expect(() =>
      verifyWebhook({ body: tampered, headers: delivery.headers, signingSecret: setting.signingSecret }),
    ).toThrow(WebhookVerificationError);
    expect(() =>
      verifyWebhook({
        body: delivery.rawBody,
        headers: delivery.headers,
        credential: { apiKey: randomUUID() },
      }),
    ).toThrow(WebhookVerificationError);

    const [webhook] = (await byrd.webhooks.list({ referenceId: order.orderId })).data;
    const attempts = await eventually(
      () => byrd.webhooks.attempts(webhook.id),
      (page) => page.data.some((a) => a.succeeded),
    );
    expect(attempts.data[0]).toMatchObject({
      webhookId: webhook.id,
      succeeded: true,
      response: { statusCode: 200 },
    });

    const before = receiver.received.length;
    const resent = await byrd.webhooks.resend([webhook.id, randomUUID()]);
    expect(resent.resent).toEqual([webhook.id]);
    expect(resent.notFound).toHaveLength(1);
    const again = await receiver.waitFor(
      (w) => receiver.received.indexOf(w) >= before && w.headers['webhook-id'] === webhook.id,
    );
    expect(
      verifyWebhook({ body: again.rawBody, headers: again.headers, signingSecret: setting.signingSecret }).id,
    ).toBe(webhook.id);
    const kinds = await eventually(
      async () => (await collect(byrd.webhooks.allAttempts(webhook.id))).map((a) => a.kind),
      (all) => all.length === 2,
    );
    expect(kinds).toEqual(['resend', 'scheduled']);

    const basic = await byrd.webhooks.settings.create({
      url: `${receiver.url}/basic`,
      credentialType: 'basic',
      events: ['order.created'],
    });
    const second = await byrd.orders.create({ amount: '7.00', currency: 'EUR' });
    const basicDelivery = await receiver.waitFor(
      (w) => w.rawBody.includes(second.orderId) && w.rawBody.includes(basic.id),
    );
    expect(
      verifyWebhook({
        body: basicDelivery.rawBody,
        headers: basicDelivery.headers,
        signingSecret: basic.signingSecret,
        credential: basic.credential,
      }).settingsId,
    ).toBe(basic.id);
    expect(() =>
      verifyWebhook({
        body: basicDelivery.rawBody,
        headers: basicDelivery.headers,
        credential: { username: 'x', password: 'y' },
      }),
    ).toThrow(WebhookVerificationError);
    expect(await byrd.webhooks.settings.get(basic.id)).toMatchObject({
      url: `${receiver.url}/basic`,
      events: ['order.created'],
    });
    expect((await byrd.webhooks.settings.list()).map((s) => s.id)).toEqual(
      expect.arrayContaining([setting.id, basic.id]),
    );
    expect(await byrd.webhooks.settings.delete(basic.id)).toEqual({ id: basic.id, deleted: true });
  });

  it('the edge serves the whole public API as one document at /docs/json: every service merged, nothing internal', async () => {
    const response = await fetch(`${stack.url}/docs/json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      info: { title: string };
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
      'x-unavailable-services'?: string[];
    };
    expect(document.info.title).toBe('Byrd payment platform: public API');
    expect(document['x-unavailable-services']).toBeUndefined();
    const paths = Object.keys(document.paths);
    // One public path of each service, as the merchant-facing services document them.
    for (const path of [
      '/api/v2/orders',
      '/api/v2/payment',
      '/api/v2/tokens',
      '/api/v1/settings',
      '/api/v1/webhooks/listen',
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths.some((path) => path.startsWith('/checkout'))).toBe(true);
    // Health, metrics and each service's own /docs are not the public API.
    expect(paths.filter((path) => /^\/(health|metrics|docs)/.test(path))).toEqual([]);
    expect(document.components.schemas).toHaveProperty('ErrorBody');
    // A delete takes an idempotency-key as a POST does (its retry replays the first answer), optional.
    for (const path of ['/api/v2/tokens/{tokenId}', '/api/v1/settings/{id}']) {
      const operation = (document.paths[path] as Record<string, { parameters?: { name: string }[] }>).delete;
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false }),
      );
    }

    const page = await fetch(`${stack.url}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/docs/swagger-ui-bundle.js');
  });

  it('listen (the CLI) forwards the sandbox webhooks to a local address, signed as real deliveries are', async () => {
    const laptop = await new WebhookReceiver().start();
    const stop = new AbortController();
    const out: string[] = [];
    const errors: string[] = [];
    const running = runCli(
      ['listen', '--forward-to', laptop.url, '--events', 'order.created', '--base-url', stack.url],
      {
        out: (line) => out.push(line),
        err: (line) => errors.push(line),
        env: { BYRD_API_KEY: stack.merchant.apiKey },
        signal: stop.signal,
      },
    );
    const ready = await eventually(
      async () => out.find((line) => line.startsWith('Ready.')),
      (line) => line !== undefined,
    );
    const signingSecret = /signing secret is (whsec_\S+)/.exec(ready ?? '')?.[1];
    expect(signingSecret).toBeDefined();

    const order = await byrd.orders.create({ amount: '9.99', currency: 'EUR', orderRef: 'listened-1' });
    await byrd.payments.create({
      type: 'card',
      amount: '9.99',
      currency: 'EUR',
      orderId: order.orderId,
      card: card(VISA),
    });
    const forwarded = await laptop.waitFor((w) => w.rawBody.includes(order.orderId));
    // The laptop checks it exactly as a receiver of a real setting does.
    const delivery = verifyWebhook({ body: forwarded.rawBody, headers: forwarded.headers, signingSecret });
    expect(delivery).toMatchObject({ event: 'order.created', content: { orderId: order.orderId } });
    expect(() =>
      verifyWebhook({
        body: forwarded.rawBody.replace('9.99', '0.01'),
        headers: forwarded.headers,
        signingSecret,
      }),
    ).toThrow(WebhookVerificationError);
    await eventually(
      async () => out.filter((line) => line.startsWith('order.created ') && line.includes('-> 200')),
      (lines) => lines.length > 0,
    );
    // Only the events asked for: the payment's transaction and order.paid stayed away.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(laptop.received.map((w) => JSON.parse(w.rawBody).event)).toEqual(['order.created']);

    stop.abort();
    expect(await running).toBe(0);
    expect(errors).toEqual([]);
    await laptop.stop();
  });

  it('listen waits out a 429 (every stream the merchant may hold open) and opens once one closes', async () => {
    const laptop = await new WebhookReceiver().start();
    const held: AbortController[] = [];
    let opened = 0;
    while (opened < 100) {
      const abort = new AbortController();
      const answer = await fetch(`${stack.url}/api/v1/webhooks/listen`, {
        headers: { 'x-api-key': stack.merchant.apiKey, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      if (answer.status !== 200) break;
      held.push(abort);
      opened++;
    }
    expect(opened).toBe(25); // the platform's cap per merchant (LISTEN_SESSIONS_PER_MERCHANT)

    const stop = new AbortController();
    const waits: [string, number][] = [];
    let ready = false;
    const running = listen({
      apiKey: stack.merchant.apiKey,
      baseUrl: stack.url,
      forwardTo: laptop.url,
      signal: stop.signal,
      onReconnecting: (reason, retryInMs) => waits.push([reason, retryInMs]),
      onReady: () => (ready = true),
    });
    expect(
      await eventually(
        async () => waits.length,
        (count) => count > 0,
      ),
    ).toBeGreaterThan(0);
    expect(waits[0][0]).toContain('listen streams');
    expect(waits[0][1]).toBeGreaterThanOrEqual(5_000); // as Retry-After says
    held.pop()!.abort();
    expect(
      await eventually(
        async () => ready,
        (open) => open,
        15_000,
      ),
    ).toBe(true);
    stop.abort();
    await running;
    for (const abort of held) abort.abort();
    await laptop.stop();
  }, 30_000);

  describe('idempotent retries', () => {
    let network: FlakyNetwork;
    let flaky: ByrdClient;

    beforeAll(async () => {
      network = await new FlakyNetwork(stack.url).start();
      flaky = new ByrdClient({ apiKey: stack.merchant.apiKey, baseUrl: network.url, retry: FAST_RETRIES });
    });
    afterAll(() => network?.stop());

    const payment = (orderRef: string): CreatePaymentRequest => ({
      type: 'card',
      amount: '21.00',
      currency: 'EUR',
      orderRef,
      card: card(VISA),
    });

    it('replays the first answer for the same key: same transaction, one charge', async () => {
      const orderRef = `same-key-${randomUUID()}`;
      const idempotencyKey = randomUUID();
      const first = await byrd.payments.create(payment(orderRef), { idempotencyKey });
      const second = await byrd.payments.create(payment(orderRef), { idempotencyKey });
      expect(second.transactionId).toBe(first.transactionId);
      expect((await byrd.transactions.list({ orderRef })).pagination.totalAvailable).toBe(1);
    });

    it('retries a payment whose answer was lost with the same key, and the card is charged once', async () => {
      const orderRef = `lost-answer-${randomUUID()}`;
      network.fail('POST', '/api/v2/payment', 'lose-answer');
      const result = await flaky.payments.create(payment(orderRef));

      expect(result.status).toBe('Success');
      const charged = await byrd.transactions.list({ orderRef });
      expect(charged.data.map((t) => t.transactionId)).toEqual([result.transactionId]);
      const sent = network.requests('POST', '/api/v2/payment').filter((r) => r.body.includes(orderRef));
      expect(sent).toHaveLength(2);
      expect(sent[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(sent[1].headers['idempotency-key']).toBe(sent[0].headers['idempotency-key']);
    });

    it('retries 5xx, 429 (after Retry-After) and broken connections, then gives up with a typed error', async () => {
      network.fail(
        'POST',
        '/api/v2/orders',
        { status: 503, code: 'BYRD999' },
        { status: 429, code: 'BYRD206', retryAfter: '0' },
        'reset',
      );
      const orderRef = `retried-${randomUUID()}`;
      const order = await flaky.orders.create({ amount: '5.00', currency: 'EUR', orderRef });
      const sent = network.requests('POST', '/api/v2/orders').filter((r) => r.body.includes(orderRef));
      expect(sent).toHaveLength(4);
      expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
      expect((await byrd.orders.get(order.orderId)).orderRef).toBe(orderRef);

      network.fail('GET', '/api/v2/orders', 'reset', 'reset', 'reset', 'reset');
      const gaveUp = await flaky.orders.get(order.orderId).catch((e: unknown) => e);
      expect(gaveUp).toBeInstanceOf(ByrdConnectionError);
      expect((gaveUp as ByrdConnectionError).attempts).toBe(4);
    });

    it('deletes a token and a webhook setting whose first answer was lost: the retry answers as the first did, not 404', async () => {
      const token = await byrd.tokens.create({
        CustomReference: `lost-delete-${randomUUID()}`,
        Card: card(VISA),
      });
      network.fail('DELETE', '/api/v2/tokens/', 'lose-answer');
      await expect(flaky.tokens.delete(token.tokenId)).resolves.toBeUndefined();
      const sent = network.requests('DELETE', `/api/v2/tokens/${token.tokenId}`);
      expect(sent).toHaveLength(2);
      expect(sent[1].headers['idempotency-key']).toBe(sent[0].headers['idempotency-key']);
      expect(await failureOf(byrd.tokens.get(token.tokenId))).toMatchObject({ status: 404, code: 'BYRD901' });

      const setting = await byrd.webhooks.settings.create({
        url: `${receiver.url}/lost-delete`,
        credentialType: 'api-key',
      });
      network.fail('DELETE', '/api/v1/settings/', 'lose-answer');
      expect(await flaky.webhooks.settings.delete(setting.id)).toEqual({ id: setting.id, deleted: true });
      expect(network.requests('DELETE', `/api/v1/settings/${setting.id}`)).toHaveLength(2);
      expect(await failureOf(byrd.webhooks.settings.get(setting.id))).toMatchObject({
        status: 404,
        code: 'BYRD901',
      });
    });

    it('waits out a Retry-After past its backoff cap, and throws at once one past maxRetryAfterMs', async () => {
      const orderRef = `rate-limited-${randomUUID()}`;
      network.fail('POST', '/api/v2/orders', { status: 429, code: 'BYRD206', retryAfter: '2' });
      await flaky.orders.create({ amount: '5.00', currency: 'EUR', orderRef });
      const sent = network.requests('POST', '/api/v2/orders').filter((r) => r.body.includes(orderRef));
      expect(sent).toHaveLength(2);
      // FAST_RETRIES caps the backoff at 200 ms; the window the server named is waited out all the same.
      expect(sent[1].at - sent[0].at).toBeGreaterThanOrEqual(2_000);

      const laterRef = `rate-limited-${randomUUID()}`;
      network.fail('POST', '/api/v2/orders', { status: 429, code: 'BYRD206', retryAfter: '3600' });
      const refused = await failureOf(
        flaky.orders.create({ amount: '5.00', currency: 'EUR', orderRef: laterRef }),
      );
      expect(refused).toMatchObject({ status: 429, code: 'BYRD206', retryAfterSeconds: 3600 });
      expect(
        network.requests('POST', '/api/v2/orders').filter((r) => r.body.includes(laterRef)),
      ).toHaveLength(1);
    });

    it('waits out a key still running on the server (409 BYRD409) past its retries, with the same key', async () => {
      // A replica died mid-payment: the key stays held until its lease runs out, and only then is the
      // outcome known. Giving up after the usual retries would read as a refusal.
      const orderRef = `in-progress-${randomUUID()}`;
      const busy = { status: 409, code: 'BYRD409', retryAfter: '0' };
      network.fail('POST', '/api/v2/orders', ...Array.from({ length: 8 }, () => busy));
      const order = await flaky.orders.create({ amount: '5.00', currency: 'EUR', orderRef });
      expect((await byrd.orders.get(order.orderId)).orderRef).toBe(orderRef);
      const sent = network.requests('POST', '/api/v2/orders').filter((r) => r.body.includes(orderRef));
      expect(sent).toHaveLength(9);
      expect(new Set(sent.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    });

    it('does not retry a refusal, and gives each logical call its own key', async () => {
      const before = network.requests('POST', '/api/v2/orders').length;
      await failureOf(flaky.orders.create({ amount: 'x', currency: 'EUR' }));
      expect(network.requests('POST', '/api/v2/orders')).toHaveLength(before + 1);

      await flaky.orders.create({ amount: '1.00', currency: 'EUR' });
      await flaky.orders.create({ amount: '1.00', currency: 'EUR' });
      const [a, b] = network.requests('POST', '/api/v2/orders').slice(-2);
      expect(a.headers['idempotency-key']).not.toBe(b.headers['idempotency-key']);
    });
  });

  it('follows no redirect: the API key and a card never go to another address', async () => {
    const elsewhere: string[] = [];
    const thief = createServer((request, response) => {
      elsewhere.push(`${request.method} ${request.url} ${String(request.headers['x-api-key'])}`);
      response.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => thief.listen(0, '127.0.0.1', resolve));
    const thiefUrl = `http://127.0.0.1:${(thief.address() as AddressInfo).port}`;
    const redirecting = createServer((request, response) => {
      request.resume();
      response.writeHead(307, { location: `${thiefUrl}${request.url}` }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const client = new ByrdClient({
        apiKey: 'k-secret-key',
        baseUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
        retry: FAST_RETRIES,
      });
      const refused = await failureOf(
        client.payments.create({ type: 'card', amount: '1.00', currency: 'EUR', card: card(VISA) }),
      );
      expect(refused).toBeInstanceOf(ByrdApiError);
      expect(refused.status).toBe(307);
      expect(elsewhere).toEqual([]);
      // Nor does the key show when the client itself is logged.
      expect(inspect(client, { depth: 10 })).not.toContain('k-secret-key');
      expect(JSON.stringify(client)).not.toContain('k-secret-key');
    } finally {
      thief.close();
      redirecting.close();
    }
  });
});
