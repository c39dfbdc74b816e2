import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { futureExpiry } from '@byrd/platform/testing';
import { ThreeDSLinks } from '../src/three-ds/three-ds-links.js';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsHarness } from './harness.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MASTER_CHALLENGE = '5555341244441115';
const VISA_CHALLENGE = '4000000000003220';
const TIMEOUT_CARD = '5201282999005515'; // authorised by the acquirer, its answer lost
const NOT_ENROLLED = '5505772716954642';
const BROWSER = {
  acceptHeader: 'text/html',
  javaEnabled: false,
  javascriptEnabled: true,
  language: 'pt-PT',
  colorDepth: 24,
  screenHeight: 900,
  screenWidth: 1440,
  timeZone: -60,
  userAgent: 'Mozilla/5.0 (test)',
};

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

/** The 3DS browser SDK protocol and the sandbox issuer's pages, over HTTP as a browser calls them. */
describe('3D Secure in the browser (SDK protocol, sandbox ACS, action.url)', () => {
  let h: PaymentsHarness;
  let base: string;

  beforeAll(async () => {
    h = await PaymentsHarness.start({}, { publicBaseIsSelf: true });
    base = `${h.paymentsUrl}/3ds`;
  });
  afterAll(() => h?.stop());

  /** A browser call: no API key. A 2xx answer must be `{ data }` (what the public SDK reads): unwrapped here. */
  const api = async (path: string, body?: unknown) => {
    const answer = await h.request('POST', `/3ds/api${path}`, body ?? {}, { 'x-api-key': '' });
    if (answer.status >= 300) return answer;
    expect(Object.keys(answer.body)).toEqual(['data']);
    return { ...answer, body: answer.body.data };
  };

  async function form(url: string, fields: Record<string, string>): Promise<Page> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  async function challengePayment(card = MASTER_CHALLENGE, overrides: Record<string, unknown> = {}) {
    const { status, body } = await h.pay(card, overrides);
    expect(status).toBe(201);
    expect(body.code).toBe('BYRD207');
    return body;
  }

  /** preAuth, auth and the challenge page, as the SDK drives them. */
  async function openChallenge(id: string) {
    expect((await api(`/v2/${id}/preAuth`, { browser: BROWSER })).status).toBe(200);
    const auth = await api(`/v1/${id}/auth`, { threeDSCompInd: 'Y' });
    expect(auth.status).toBe(200);
    const creq = Buffer.from(
      JSON.stringify({
        threeDSServerTransID: auth.body.processId,
        acsTransID: auth.body.challengeId,
        messageVersion: auth.body.challengeVersion,
        messageType: 'CReq',
        challengeWindowSize: '05',
      }),
    ).toString('base64url');
    const page = await form(auth.body.challengeUrl, { creq });
    expect(page.status).toBe(200);
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1];
    return { page, action: action!, auth: auth.body };
  }

  async function answer(id: string, fields: Record<string, string>) {
    const { action } = await openChallenge(id);
    const page = await form(action, { threeDSServerTransID: id, ...fields });
    expect(page.status).toBe(200);
    return page;
  }

  /** How many codes the 3DS server's issuer checked, summed over `replicas` (their `/metrics`). */
  async function issuerChecks(replicas: string[]): Promise<number> {
    let total = 0;
    for (const url of replicas) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const [, labels, value] of text.matchAll(
        /^three_ds_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm,
      )) {
        if (labels.includes('step="challenge"')) total += Number(value);
      }
    }
    return total;
  }

  function decodeField(page: string, name: string): any {
    const value = new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1];
    return JSON.parse(Buffer.from(value!, 'base64url').toString('utf8'));
  }

  it('takes a challenge payment from preAuth to an authorised payment and a paid order', async () => {
    const { body: order } = await h.createOrder();
    const payment = await challengePayment(MASTER_CHALLENGE, {
      orderId: order.orderId,
      orderRef: order.orderRef,
      redirectUrl: 'https://shop.example.com/return?cart=7',
    });
    const id = payment.threeDSecure.id;

    const preAuth = await api(`/v2/${id}/preAuth`, {
      browser: BROWSER,
      customer: { name: 'Ana Silva', email: 'ana@example.com' },
    });
    expect(preAuth.status).toBe(200);
    expect(preAuth.body).toEqual({
      id,
      processId: id,
      dsMethodUrl: `${base}/acs/method`,
      notificationUrl: `${base}/notification`,
    });
    const stored = await h.payments.get(DataSource).getRepository(ThreeDSSession).findOneByOrFail({ id });
    expect(stored.browser).toEqual(BROWSER);

    const auth = await api(`/v1/${id}/auth`, { threeDSCompInd: 'Y' });
    expect(auth.status).toBe(200);
    expect(auth.body).toEqual({
      id,
      processId: id,
      challengeId: expect.stringMatching(GUID),
      challengeVersion: '2.2.0',
      challengeUrl: `${base}/acs/challenge`,
    });

    // Unanswered: 409 in the uniform error body, which the SDK retries.
    const early = await api(`/v2/${id}/postAuth`);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({
      code: 'BYRD201',
      message: expect.any(String),
      requestId: expect.any(String),
    });

    const { page, action } = await openChallenge(id);
    expect(page.text).toContain('25.00 EUR');
    expect(page.text).toContain('MASTER ending in 1115');
    expect(page.text).toContain('Acme Shop');
    expect(page.text).toContain('enter 1234');
    expect(page.text).not.toContain(MASTER_CHALLENGE);
    expect(page.text).not.toContain('555534');
    expect((await api(`/v2/${id}/postAuth`)).status).toBe(409);

    const end = await form(action, { threeDSServerTransID: id, otp: '1234', action: 'submit' });
    expect(end.status).toBe(200);
    expect(decodeField(end.text, 'cres')).toEqual({
      threeDSServerTransID: id,
      acsTransID: auth.body.challengeId,
      messageVersion: '2.2.0',
      messageType: 'CRes',
      transStatus: 'Y',
      challengeCompletionInd: 'Y',
    });

    const result = await api(`/v2/${id}/postAuth`);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      transactionId: payment.transactionId,
      callbackUrl: 'https://shop.example.com/return?cart=7',
      status: 'Authorized',
      transStatus: 'Y',
      transStatusReason: null,
      authenticationData: {
        threeDsVersion: 'V2',
        aav: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/),
        dsTransactionId: expect.stringMatching(GUID),
        eci: '02',
        verificationMethod: 'ThreeDSecure',
        protocolVersion: '2.2.0',
      },
      executePayment: true,
      paymentStatus: 'Success',
      code: 'BYRD200',
      message: 'Operation successfully completed',
    });
    // Asking again changes nothing.
    expect((await api(`/v2/${id}/postAuth`)).body).toEqual(result.body);

    const transaction = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(transaction.body).toMatchObject({
      status: 'Success',
      code: 'BYRD200',
      threeDSecure: { id, status: 'Authorized', transStatus: 'Y', eci: '02' },
    });
    await h.waitForOrder(order.orderId, (o) => o.status === 'paid');

    // action.url now sends the shopper straight back, with the outcome in the query.
    const landing = await fetch(payment.action.url, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    const back = new URL(landing.headers.get('location')!);
    expect(back.origin + back.pathname).toBe('https://shop.example.com/return');
    expect(Object.fromEntries(back.searchParams)).toEqual({
      cart: '7',
      transactionId: payment.transactionId,
      status: 'Success',
    });
  });

  it('a challenge answered twice at once (a double submit, two tabs, two replicas) ends once: the issuer asked once, one outcome, at most one charge', async () => {
    const db = h.payments.get(DataSource);
    const replica = await h.startReplica();
    for (let round = 0; round < 20; round++) {
      const payment = await challengePayment();
      const id = payment.threeDSecure.id;
      const { action } = await openChallenge(id);
      // Odd rounds race the right code against a wrong one: either may win, never both.
      const codes = round % 2 === 0 ? ['1234', '1234'] : ['1234', '0000'];
      const checked = await issuerChecks([h.paymentsUrl, replica]);
      // One submission reaches this replica, the other the second one (as behind a load balancer).
      const pages = await Promise.all(
        codes.map((otp, i) =>
          form(i === 0 ? action : action.replace(h.paymentsUrl, replica), {
            threeDSServerTransID: id,
            otp,
            action: 'submit',
          }),
        ),
      );
      expect(pages.map((page) => page.status)).toEqual([200, 200]);
      // A second check of a code can count at a real ACS as a failed attempt, or block the card.
      expect((await issuerChecks([h.paymentsUrl, replica])) - checked).toBe(1);
      // Both pages tell the one outcome.
      const told = pages.map((page) => decodeField(page.text, 'cres').transStatus);
      expect(told[1]).toBe(told[0]);
      const result = await api(`/v2/${id}/postAuth`);
      expect(result.status).toBe(200);
      const charged = await db.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger WHERE reference = $1`,
        [payment.transactionId],
      );
      const stored = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
      if (result.body.status === 'Authorized') {
        expect([stored.body.status, charged[0].n]).toEqual(['Success', 1]);
      } else {
        expect(round % 2).toBe(1);
        expect([stored.body.status, charged[0].n]).toEqual(['Denied', 0]);
      }
    }
  });

  it('gives VISA challenge cards ECI 05 and an AAV', async () => {
    const payment = await challengePayment(VISA_CHALLENGE);
    const id = payment.threeDSecure.id;
    await answer(id, { otp: '1234', action: 'submit' });
    const result = await api(`/v2/${id}/postAuth`);
    expect(result.body).toMatchObject({
      status: 'Authorized',
      paymentStatus: 'Success',
      authenticationData: { eci: '05', aav: expect.stringMatching(/^[A-Za-z0-9+/]{27}=$/) },
    });
  });

  it('denies the payment when the code is wrong', async () => {
    const { body: order } = await h.createOrder();
    const payment = await challengePayment(MASTER_CHALLENGE, {
      orderId: order.orderId,
      orderRef: order.orderRef,
    });
    const id = payment.threeDSecure.id;
    const end = await answer(id, { otp: '9999', action: 'submit' });
    expect(decodeField(end.text, 'cres').transStatus).toBe('N');
    expect(end.text).toContain('Verification failed');

    const result = await api(`/v2/${id}/postAuth`);
    expect(result.body).toMatchObject({
      status: 'Unauthorized',
      transStatus: 'N',
      transStatusReason: '01',
      authenticationData: { aav: null, eci: '00' },
      executePayment: false,
      paymentStatus: 'Denied',
      code: 'BYRD205',
    });
    const transaction = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(transaction.body).toMatchObject({ status: 'Denied', code: 'BYRD205' });
    const settled = await h.waitForOrder(order.orderId, (o) => o.transactions[0]?.status === 'Denied');
    expect(settled.status).toBe('created');
  });

  it('cancels the payment when the shopper presses Cancel (BYRD208)', async () => {
    const payment = await challengePayment(VISA_CHALLENGE);
    const id = payment.threeDSecure.id;
    await answer(id, { action: 'cancel' });
    const result = await api(`/v2/${id}/postAuth`);
    expect(result.body).toMatchObject({
      status: 'Unauthorized',
      transStatus: 'N',
      transStatusReason: '19',
      paymentStatus: 'Denied',
      code: 'BYRD208',
      message: 'Payment canceled by the shopper',
    });
    const transaction = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(transaction.body).toMatchObject({ status: 'Canceled', code: 'BYRD208' });
  });

  it("returns a checkoutKey payment's shopper only to an origin the order or its merchant allows", async () => {
    // The checkout key is in every order link: whoever holds one must not make our 3DS pages send
    // shoppers to a site of their choosing, as the hosted form refuses its unsigned configs.redirectUrl.
    const { body: order } = await h.createOrder(); // redirectUrl https://shop.example.com/return
    const asShopper = (redirectUrl?: string) =>
      h.request(
        'POST',
        `/api/v2/payment?checkoutKey=${order.checkoutKey}`,
        {
          type: 'card',
          amount: '25.00',
          currency: 'EUR',
          orderId: order.orderId,
          redirectUrl,
          card: { number: VISA_CHALLENGE, expiration: futureExpiry(), cvv: '123' },
        },
        { 'x-api-key': '' },
      );
    /** Where the shopper ends up: the shopper cancels the challenge (no money), then action.url. */
    async function returnOf(payment: any): Promise<{ location: URL; callbackUrl: string }> {
      await answer(payment.threeDSecure.id, { action: 'cancel' });
      const landing = await fetch(payment.action.url, { redirect: 'manual' });
      expect(landing.status).toBe(303);
      const { callbackUrl } = (await api(`/v2/${payment.threeDSecure.id}/postAuth`)).body;
      return { location: new URL(landing.headers.get('location')!), callbackUrl };
    }

    const foreign = await asShopper('https://evil.example.net/collect');
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({
      code: 'BYRD900',
      errors: [{ field: 'redirectUrl', message: expect.stringContaining('https://shop.example.com') }],
    });
    const rows = await h.payments
      .get(DataSource)
      .query(`SELECT id FROM transactions WHERE order_id = $1`, [order.orderId]);
    expect(rows).toEqual([]);

    // None sent: the order's own.
    const plain = await asShopper();
    expect(plain.status).toBe(201);
    const toOrder = await returnOf(plain.body);
    expect(toOrder.location.origin + toOrder.location.pathname).toBe('https://shop.example.com/return');
    expect(toOrder.callbackUrl).toBe('https://shop.example.com/return');

    // Another page of the order's origin, or one of the merchant's checkout origins.
    const listed = await h.call(h.ordersUrl, 'PUT', '/api/v2/checkout-origins', {
      origins: ['https://checkout.shop.example'],
    });
    expect(listed.status).toBe(200);
    try {
      for (const allowed of [
        'https://shop.example.com/thanks',
        'https://checkout.shop.example/done?cart=9',
      ]) {
        const payment = await asShopper(allowed);
        expect(payment.status).toBe(201);
        const back = await returnOf(payment.body);
        expect(back.callbackUrl).toBe(allowed);
        expect(back.location.origin).toBe(new URL(allowed).origin);
      }
    } finally {
      await h.call(h.ordersUrl, 'PUT', '/api/v2/checkout-origins', { origins: [] });
    }

    // The merchant's own backend (API key) still sends its shoppers wherever it likes.
    const merchants = await challengePayment(VISA_CHALLENGE, {
      redirectUrl: 'https://elsewhere.example.org/back',
    });
    expect((await returnOf(merchants)).location.origin).toBe('https://elsewhere.example.org');
  });

  it('answers a frictionless session at once: no 3DS Method, no challenge, the result', async () => {
    const { body: payment } = await h.pay('5448280000000007');
    expect(payment.code).toBe('BYRD200');
    const id = payment.threeDSecure.id;
    expect((await api(`/v2/${id}/preAuth`, { browser: BROWSER })).body.dsMethodUrl).toBe('');
    const auth = await api(`/v1/${id}/auth`);
    expect(auth.status).toBe(200);
    expect(auth.body.challengeUrl).toBe('');
    const result = await api(`/v2/${id}/postAuth`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      transactionId: payment.transactionId,
      status: 'Authorized',
      transStatus: 'Y',
      executePayment: true,
      paymentStatus: 'Success',
      code: 'BYRD200',
      authenticationData: { eci: '02' },
    });
  });

  it('keeps postAuth at 409 while a payment whose acquirer answer was lost awaits the recovery', async () => {
    const { body: payment } = await h.pay(TIMEOUT_CARD);
    expect(payment.status).toBe('TemporaryFailed');
    // Not "Error": the acquirer may well have charged (the recovery, a minute later here, decides).
    const pending = await api(`/v2/${payment.threeDSecure.id}/postAuth`);
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('BYRD201');
  });

  it("says on the bank's page only that the verification is complete, not that the payment is", async () => {
    // Authenticated, then declined by the acquirer (sandbox amount rules: up to 10.00 is denied).
    const payment = await challengePayment(MASTER_CHALLENGE, { amount: '5.00' });
    const id = payment.threeDSecure.id;
    const end = await answer(id, { otp: '1234', action: 'submit' });
    expect(decodeField(end.text, 'cres').transStatus).toBe('Y');
    expect(end.text).toContain('Verification complete');
    expect(end.text).not.toContain('Payment confirmed');
    const result = await api(`/v2/${id}/postAuth`);
    expect(result.body).toMatchObject({ status: 'Authorized', paymentStatus: 'Denied', code: 'BYRD205' });
  });

  it('reports a not enrolled card to the SDK as transStatus Y (paid), the EMV U on the transaction', async () => {
    const { body: payment } = await h.pay(NOT_ENROLLED);
    expect(payment.status).toBe('Success');
    const result = await api(`/v2/${payment.threeDSecure.id}/postAuth`);
    expect(result.status).toBe(200);
    // The public SDK's IPostAuthResponse: transStatus "Y" | "N", consistent with executePayment.
    expect(result.body).toMatchObject({
      status: 'NotEnrolled',
      transStatus: 'Y',
      transStatusReason: '13',
      executePayment: true,
      paymentStatus: 'Success',
    });
    const transaction = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(transaction.body.threeDSecure).toMatchObject({ status: 'NotEnrolled', transStatus: 'U' });
  });

  it('returns a shopper whose payment outlasts the recovery window with status Processing, never a failure', async () => {
    const db = h.payments.get(DataSource);
    const withReturn = await challengePayment(MASTER_CHALLENGE, { amount: '10.01' });
    const withoutReturn = await challengePayment(MASTER_CHALLENGE, {
      amount: '10.01',
      redirectUrl: undefined,
    });
    for (const payment of [withReturn, withoutReturn]) {
      await answer(payment.threeDSecure.id, { otp: '1234', action: 'submit' });
      // Its answer lost an hour ago, and the recovery has still not settled it (the acquirer away).
      await db.query(
        `UPDATE three_ds_sessions SET challenge_completed_at = now() - interval '1 hour' WHERE id = $1`,
        [payment.threeDSecure.id],
      );
    }
    const landing = await fetch(withReturn.action.url, { redirect: 'manual' });
    expect(landing.status).toBe(303);
    expect(Object.fromEntries(new URL(landing.headers.get('location')!).searchParams)).toEqual({
      transactionId: withReturn.transactionId,
      status: 'Processing',
    });
    const outcome = await fetch(withoutReturn.action.url, { redirect: 'manual' });
    expect(outcome.status).toBe(200);
    const shown = await outcome.text();
    expect(shown).toContain('Payment being processed');
    expect(shown).not.toContain('not completed');
  });

  it('answers 404 for unknown or malformed ids, on the API and the pages', async () => {
    for (const id of [randomUUID(), 'not-a-guid']) {
      for (const path of [`/v2/${id}/preAuth`, `/v1/${id}/auth`, `/v2/${id}/postAuth`]) {
        const answer = await api(path, { browser: BROWSER });
        expect({ path, status: answer.status, code: answer.body.code }).toEqual({
          path,
          status: 404,
          code: 'BYRD901',
        });
      }
    }
    const page = await fetch(`${base}/authenticate/${randomUUID()}`);
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('This verification was not found');
    // Words put in the address are not shown on our page (a stranger's "call this number").
    const spoofed = await fetch(
      `${base}/authenticate/is%20blocked.%20Call%20%2B44%2020%207946%200000%20now.`,
    );
    expect(spoofed.status).toBe(404);
    const spoofedText = await spoofed.text();
    expect(spoofedText).toContain('This verification was not found');
    expect(spoofedText).not.toContain('Call');

    const { threeDSecure } = await challengePayment();
    const creq = Buffer.from(
      JSON.stringify({
        threeDSServerTransID: threeDSecure.id,
        acsTransID: randomUUID(),
        messageVersion: '2.2.0',
        messageType: 'CReq',
      }),
    ).toString('base64url');
    expect((await form(`${base}/acs/challenge`, { creq })).status).toBe(404);
    const garbage = await form(`${base}/acs/challenge`, { creq: 'not base64 json' });
    expect(garbage.status).toBe(400);
    expect(garbage.text).toContain('This page was sent data it cannot read.');
    // Nor words a stranger's form post puts in a field's name (its value unreadable: a NUL).
    for (const page of ['/notification', '/acs/method', '/acs/challenge']) {
      const spoofedForm = await form(`${base}${page}`, {
        'Your card is blocked. Call +44 20 7946 0000': '\u0000',
      });
      expect({ page, status: spoofedForm.status }).toEqual({ page, status: 400 });
      expect(spoofedForm.text).toContain('This page was sent data it cannot read.');
      expect(spoofedForm.text).not.toContain('Call');
    }
  });

  it('refuses a preAuth without browser data', async () => {
    const { threeDSecure } = await challengePayment();
    const answer = await api(`/v2/${threeDSecure.id}/preAuth`, {});
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([expect.objectContaining({ field: 'browser' })]);
  });

  it('ends a challenge left past its deadline as expired, and a late code cannot authenticate', async () => {
    const { body: order } = await h.createOrder();
    const payment = await challengePayment(MASTER_CHALLENGE, {
      orderId: order.orderId,
      orderRef: order.orderRef,
    });
    const id = payment.threeDSecure.id;
    const { action } = await openChallenge(id);
    await h.payments
      .get(DataSource)
      .getRepository(ThreeDSSession)
      .update({ id }, { expiresAt: new Date(Date.now() - 1_000) });

    const late = await form(action, { threeDSServerTransID: id, otp: '1234', action: 'submit' });
    expect(decodeField(late.text, 'cres').transStatus).toBe('N');
    const result = await api(`/v2/${id}/postAuth`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      status: 'Expired',
      transStatusReason: '14',
      paymentStatus: 'Denied',
    });
    await h.waitForOrder(order.orderId, (o) => o.transactions[0]?.status === 'Denied');
  });

  it("ends a challenge when its order stops accepting payments, and offers none once the order's time is up", async () => {
    const orders = h.orders.get(DataSource);
    const { body: order } = await h.createOrder();
    const endsAt = new Date(Date.now() + 60_000);
    await orders.query(`UPDATE orders SET expires_at = $2 WHERE id = $1`, [order.orderId, endsAt]);
    const payment = await challengePayment(MASTER_CHALLENGE, {
      orderId: order.orderId,
      orderRef: order.orderRef,
    });
    const sessions = h.payments.get(DataSource).getRepository(ThreeDSSession);
    const session = await sessions.findOneByOrFail({ id: payment.threeDSecure.id });
    // Not the 15 minutes a shopper otherwise has: the order refuses money after `endsAt`.
    expect(session.expiresAt.getTime()).toBe(endsAt.getTime());
    const transaction = await h.payments
      .get(DataSource)
      .getRepository(Transaction)
      .findOneByOrFail({ id: payment.transactionId });
    expect(transaction.expiresAt.getTime()).toBe(endsAt.getTime());

    // The same for a two-step payment whose card (and challenge) comes with /pay.
    const { body: twoStepOrder } = await h.createOrder();
    await orders.query(`UPDATE orders SET expires_at = $2 WHERE id = $1`, [twoStepOrder.orderId, endsAt]);
    const created = await h.request('POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderId: twoStepOrder.orderId,
      orderRef: twoStepOrder.orderRef,
      redirectUrl: 'https://shop.example.com/return',
    });
    expect(created.body.code).toBe('BYRD010');
    const paid = await h.request('POST', `/api/v2/payment/${created.body.transactionId}/pay`, {
      card: { number: MASTER_CHALLENGE, expiration: futureExpiry(), cvv: '123' },
    });
    expect(paid.body.code).toBe('BYRD207');
    const twoStepSession = await sessions.findOneByOrFail({ id: paid.body.threeDSecure.id });
    expect(twoStepSession.expiresAt.getTime()).toBe(endsAt.getTime());

    // Past its expiry, before the sweep has marked it: no 3DS is started for it.
    const { body: lapsed } = await h.createOrder();
    await orders.query(`UPDATE orders SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      lapsed.orderId,
    ]);
    const refused = await h.pay(MASTER_CHALLENGE, { orderId: lapsed.orderId, orderRef: lapsed.orderRef });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      code: 'BYRD205',
      message: `Order ${lapsed.orderId} is expired and cannot be paid`,
    });
  });

  it('serves the public SDK as it calls: CORS preflight, and JSON posts with no body', async () => {
    const preflight = await fetch(`${base}/api/v2/${randomUUID()}/postAuth`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,correlationid,x-attempt',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'content-type,correlationid,x-attempt',
    );

    const { threeDSecure } = await h.pay('5448280000000007').then((a) => a.body);
    for (const path of [`v1/${threeDSecure.id}/auth`, `v2/${threeDSecure.id}/postAuth`]) {
      const response = await fetch(`${base}/api/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://shop.example.com' },
      });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    }
    // Errors carry the CORS header too, or the SDK could not read the 409 it retries.
    const pending = await fetch(`${base}/api/v2/${(await challengePayment()).threeDSecure.id}/postAuth`, {
      method: 'POST',
      headers: { origin: 'https://shop.example.com' },
    });
    expect(pending.status).toBe(409);
    expect(pending.headers.get('access-control-allow-origin')).toBe('*');
  });

  it("runs the issuer's 3DS Method and notifies our 3DS server, and no other", async () => {
    const { threeDSecure } = await challengePayment();
    const notification = h.payments.get(ThreeDSLinks).notification;
    const methodData = (threeDSMethodNotificationURL: string) =>
      Buffer.from(
        JSON.stringify({ threeDSServerTransID: threeDSecure.id, threeDSMethodNotificationURL }),
      ).toString('base64');
    const threeDSMethodData = methodData(notification);
    const method = await form(`${base}/acs/method`, { threeDSMethodData });
    expect(method.status).toBe(200);
    expect(method.text).toContain(`action="${notification}"`);
    expect(decodeField(method.text, 'threeDSMethodData')).toEqual({ threeDSServerTransID: threeDSecure.id });
    expect(method.headers.get('content-security-policy')).toContain(
      `form-action ${new URL(notification).origin}`,
    );

    // Our page posts by itself: never to a stranger's site, nor with a scheme or a policy of its choosing.
    for (const elsewhere of [
      'https://3ds.example.com/notify',
      'javascript:alert(1)',
      `https://a.example\uFE54sandbox/notify`,
    ]) {
      const refused = await form(`${base}/acs/method`, { threeDSMethodData: methodData(elsewhere) });
      expect({ elsewhere, status: refused.status }).toEqual({ elsewhere, status: 400 });
    }

    const notified = await form(`${base}/notification`, { threeDSMethodData });
    expect(notified.status).toBe(200);
    expect(notified.text).toContain('data-type="byrd-3ds-method-complete"');
    expect(notified.text).toContain(`data-id="${threeDSecure.id}"`);
  });

  it('sends pages that payment pages may frame, with inline code only under a nonce', async () => {
    const payment = await challengePayment();
    const { page } = await openChallenge(payment.threeDSecure.id);
    const hosted = await fetch(payment.action.url);
    for (const [name, headers, text] of [
      ['challenge', page.headers, page.text],
      ['action.url', hosted.headers, await hosted.text()],
    ] as const) {
      const csp = headers.get('content-security-policy')!;
      expect({ name, csp }).toEqual({ name, csp: expect.stringContaining('frame-ancestors *') });
      expect(csp).not.toContain('unsafe-inline');
      expect(headers.get('x-frame-options')).toBeNull();
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1];
      for (const tag of text.match(/<(script|style)[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
      expect(text).toMatch(/<html lang="en">/);
    }
  });

  it('answers action.url with the page that runs the SDK, and shows the outcome when there is no redirectUrl', async () => {
    const payment = await challengePayment(MASTER_CHALLENGE, { redirectUrl: undefined });
    const page = await fetch(payment.action.url);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain("import { authenticate } from '../sdk.js'");
    expect(text).toContain(`data-session-id="${payment.threeDSecure.id}"`);
    expect(text).toContain(`data-request-id="${payment.requestId}"`);

    await answer(payment.threeDSecure.id, { otp: '1234', action: 'submit' });
    const outcome = await fetch(payment.action.url, { redirect: 'manual' });
    expect(outcome.status).toBe(200);
    const shown = await outcome.text();
    expect(shown).toContain('Payment successful');
    expect(shown).toContain(payment.transactionId);
  });

  it('serves the SDK bundle as a cacheable, cross-origin ES module', async () => {
    const sdk = await fetch(`${base}/sdk.js`, { headers: { origin: 'https://shop.example.com' } });
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(sdk.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    expect(sdk.headers.get('access-control-allow-origin')).toBe('*');
    const source = await sdk.text();
    expect(source).toContain('export async function authenticate');
    expect(source).toContain('export const ByrdThreeDS');

    const etag = sdk.headers.get('etag')!;
    const again = await fetch(`${base}/sdk.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

/**
 * An authorisation whose acquirer answer was lost (TemporaryFailed) is usually a charge: the recovery
 * finds it at the acquirer and records Success. postAuth must not call it "Error" meanwhile, or the
 * merchant's page offers the shopper a retry that charges twice: it answers 409 (the SDK polls every
 * 2 s, 50 times) until the recovery has recorded the outcome.
 */
describe('3D Secure postAuth while the acquirer recovery settles a lost answer', () => {
  let h: PaymentsHarness;

  beforeAll(async () => {
    // The recovery waits a minute: each test lets it settle the payment (recoverNow) once it has seen
    // the answer given meanwhile. Due 3 s after the call, it could settle it before a loaded machine
    // asked anything, and the test saw no 409 at all.
    h = await PaymentsHarness.start(
      { ACQUIRER_TIMEOUT_MS: '2000', ACQUIRER_RECOVERY_AFTER_MS: '60000', ACQUIRER_RECOVERY_SWEEP_MS: '200' },
      { publicBaseIsSelf: true },
    );
  });
  afterAll(() => h?.stop());

  /** As if the payment's acquirer call had been sent a minute ago: the next sweep (200 ms) recovers it. */
  const recoverNow = (transactionId: string) =>
    h.payments.get(DataSource).query(
      `UPDATE transactions SET acquirer_pending_since = now() - interval '1 minute'
          WHERE id = $1 AND acquirer_pending_since IS NOT NULL`,
      [transactionId],
    );

  const postAuth = async (id: string) => {
    const answer = await h.request('POST', `/3ds/api/v2/${id}/postAuth`, {}, { 'x-api-key': '' });
    return { status: answer.status, body: answer.status < 300 ? answer.body.data : answer.body };
  };

  /**
   * Polls postAuth as the SDK does: 409 means "not yet". Returns the statuses seen and the answer.
   * After the first answer, the recovery may settle the payment.
   */
  async function pollPostAuth(id: string, transactionId: string) {
    const seen: number[] = [];
    for (let attempt = 0; attempt < 100; attempt++) {
      const answer = await postAuth(id);
      if (seen.at(-1) !== answer.status) seen.push(answer.status);
      if (answer.status !== 409) return { seen, answer };
      if (attempt === 0) await recoverNow(transactionId);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`postAuth of ${id} still 409 after 20 s`);
  }

  it('a frictionless payment: 409 until recovered, then paymentStatus Success', async () => {
    const { body: payment } = await h.pay(TIMEOUT_CARD);
    expect(payment.status).toBe('TemporaryFailed');
    const { seen, answer } = await pollPostAuth(payment.threeDSecure.id, payment.transactionId);
    expect(seen).toEqual([409, 200]);
    expect(answer.body).toMatchObject({ status: 'Authorized', paymentStatus: 'Success', code: 'BYRD200' });
    const transaction = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(transaction.body.status).toBe('Success');
  });

  /** A challenge payment of 10.01 (the acquirer's answer is lost) whose shopper typed the right code. */
  async function answeredAtTimeout(overrides: Record<string, unknown> = {}) {
    const { body: payment } = await h.pay(MASTER_CHALLENGE, { amount: '10.01', ...overrides });
    expect(payment.code).toBe('BYRD207');
    const id = payment.threeDSecure.id;
    await h.request('POST', `/3ds/api/v2/${id}/preAuth`, { browser: BROWSER }, { 'x-api-key': '' });
    const auth = await h.request('POST', `/3ds/api/v1/${id}/auth`, {}, { 'x-api-key': '' });
    const { challengeId } = auth.body.data;
    const answered = await fetch(`${h.paymentsUrl}/3ds/acs/challenge/${challengeId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ threeDSServerTransID: id, otp: '1234', action: 'submit' }).toString(),
    });
    expect(answered.status).toBe(200);
    const stored = await h.request('GET', `/api/v2/transactions/${payment.transactionId}`);
    expect(stored.body.status).toBe('TemporaryFailed');
    return payment;
  }

  it('a challenge payment (amount 10.01 times out): 409 after the code until recovered, then Success', async () => {
    const payment = await answeredAtTimeout();
    const id = payment.threeDSecure.id;
    const { seen, answer } = await pollPostAuth(id, payment.transactionId);
    expect(seen).toEqual([409, 200]);
    expect(answer.body).toMatchObject({
      status: 'Authorized',
      transStatus: 'Y',
      executePayment: true,
      paymentStatus: 'Success',
      code: 'BYRD200',
    });
  });

  it('action.url keeps the shopper waiting while the lost answer is recovered, then returns them with status Success', async () => {
    const payment = await answeredAtTimeout({ redirectUrl: 'https://shop.example.com/return?cart=7' });
    // action.url waits for the recovery (until its delay, two sweeps and the acquirer timeout have
    // passed) before it would give up with status=Processing; the recovery settles it once the shopper
    // has seen the first page. The shopper (re)opens action.url as the browser does, page after page,
    // until sent back.
    const pages: string[] = [];
    let back: URL | null = null;
    for (let attempt = 0; attempt < 100 && !back; attempt++) {
      const landing = await fetch(payment.action.url, { redirect: 'manual' });
      if (landing.status === 303) back = new URL(landing.headers.get('location')!);
      else {
        expect(landing.status).toBe(200);
        pages.push(/<h1[^>]*>([^<]+)<\/h1>/.exec(await landing.text())![1]);
        if (pages.length === 1) await recoverNow(payment.transactionId);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    // Never sent back as failed (TemporaryFailed) while the acquirer may have charged: it waited.
    expect(pages.length).toBeGreaterThan(0);
    expect(new Set(pages)).toEqual(new Set(['Confirming your payment']));
    expect(Object.fromEntries(back!.searchParams)).toEqual({
      cart: '7',
      transactionId: payment.transactionId,
      status: 'Success',
    });
  });
});
