// The exact requests Paybyrd's public clients send, replayed against our payments service, checking
// every field those clients read. Each case names the client and the file its shape comes from.
import { DataSource } from 'typeorm';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { PaymentsHarness } from './harness.js';

const CHALLENGE_CARD = '5555341244441115'; // Mastercard: ECI 02 once authenticated

describe('payments as the public clients call it', () => {
  let h: PaymentsHarness;

  beforeAll(async () => {
    h = await PaymentsHarness.start({}, { publicBaseIsSelf: true });
  });
  afterAll(() => h?.stop());

  /**
   * paybyrd/threedsecure-service-js, src/httpClients/FetchHttpClient.ts: every call is a POST with
   * `accept` and `content-type: application/json`, `x-attempt` / `x-max-attempts`, and
   * `JSON.stringify(request.body)` as the body, which is no body at all for auth and postAuth
   * (src/services/ThreeDSecureService.ts sends a body only to preAuth: `{ browser }`).
   */
  async function sdkCall(path: string, body?: unknown) {
    const response = await fetch(`${h.paymentsUrl}/3ds/api${path}`, {
      method: 'POST',
      headers: {
        'x-attempt': '1',
        'x-max-attempts': '50',
        accept: 'application/json',
        'content-type': 'application/json',
        origin: 'https://shop.example.com',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  }

  it("takes the 3DS SDK's three calls as it sends them and answers each inside `data`", async () => {
    const payment = await h.pay(CHALLENGE_CARD);
    expect(payment.body.code).toBe('BYRD207');
    const id = payment.body.threeDSecure.id as string;

    // Browser.create() in src/shared/utils/Browser.ts: what the SDK reads off the browser, with its
    // keys as it spells them (IBrowser: `timezoneOffset`).
    const preAuth = await sdkCall(`/v2/${id}/preAuth`, {
      browser: {
        javaEnabled: false,
        javascriptEnabled: true,
        language: 'pt-PT',
        userAgent: 'Mozilla/5.0',
        screenWidth: 1440,
        screenHeight: 900,
        timezoneOffset: -60,
        colorDepth: 24,
        acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      },
    });
    expect(preAuth.status).toBe(200);
    // Kept for the issuer's risk analysis: every field, the time zone under our name.
    const stored = await h.payments.get(DataSource).getRepository(ThreeDSSession).findOneByOrFail({ id });
    expect(stored.browser).toEqual({
      javaEnabled: false,
      javascriptEnabled: true,
      language: 'pt-PT',
      userAgent: 'Mozilla/5.0',
      screenWidth: 1440,
      screenHeight: 900,
      timeZone: -60,
      colorDepth: 24,
      acceptHeader: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    });
    expect(preAuth.headers.get('access-control-allow-origin')).toBe('*');
    // IFrameDirectoryServerService reads data.dsMethodUrl, data.processId, data.notificationUrl.
    expect(preAuth.json.data).toMatchObject({
      id,
      processId: id,
      dsMethodUrl: expect.stringContaining('/3ds/acs/method'),
      notificationUrl: expect.stringContaining('/3ds/notification'),
    });

    const auth = await sdkCall(`/v1/${id}/auth`);
    expect(auth.status).toBe(200);
    // IFrameChallengeService reads data.challengeUrl, data.challengeId, data.challengeVersion, data.processId.
    expect(auth.json.data).toMatchObject({
      id,
      processId: id,
      challengeId: expect.any(String),
      challengeVersion: '2.2.0',
      challengeUrl: expect.stringContaining('/3ds/acs/challenge'),
    });

    // Unanswered: 409, which the SDK's retry policy treats as transient (isTransientError).
    expect((await sdkCall(`/v2/${id}/postAuth`)).status).toBe(409);

    // The shopper answers the issuer's challenge page with the sandbox OTP.
    await answerChallenge(id, auth.json.data, '1234');

    const postAuth = await sdkCall(`/v2/${id}/postAuth`);
    expect(postAuth.status).toBe(200);
    // IPostAuthResponse: what the merchant's page gets back from execute().
    expect(postAuth.json.data).toMatchObject({
      transactionId: payment.body.transactionId,
      status: 'Authorized',
      transStatus: 'Y',
      authenticationData: { eci: '02', threeDsVersion: 'V2' },
      paymentStatus: 'Success',
    });
    expect((await h.request('GET', `/api/v2/transactions/${payment.body.transactionId}`)).body.status).toBe(
      'Success',
    );
  });

  it('answers postAuth of a wrong OTP with Unauthorized inside `data`', async () => {
    const payment = await h.pay(CHALLENGE_CARD);
    const id = payment.body.threeDSecure.id as string;
    await sdkCall(`/v2/${id}/preAuth`, { browser: { userAgent: 'Mozilla/5.0', language: 'en' } });
    const auth = await sdkCall(`/v1/${id}/auth`);
    await answerChallenge(id, auth.json.data, '0000');
    const postAuth = await sdkCall(`/v2/${id}/postAuth`);
    expect(postAuth.json.data).toMatchObject({ status: 'Unauthorized', transStatus: 'N' });
  });

  it('allows the headers the SDK sends in a cross-origin preflight', async () => {
    const preflight = await fetch(`${h.paymentsUrl}/3ds/api/v2/${crypto.randomUUID()}/preAuth`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'accept,content-type,x-attempt,x-max-attempts',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-max-attempts');
  });

  /**
   * The Paybyrd WooCommerce plugin (as replayed in issue 14) releases a pre-authorisation with
   * `Content-Type: application/json` and no body: the whole amount is released.
   */
  it('releases a pre-authorisation sent with a JSON content type and no body', async () => {
    const preAuth = await h.pay('4242424242424242', { isPreAuth: true, amount: '40.00' });
    expect(preAuth.body.status).toBe('Success');
    const response = await fetch(`${h.paymentsUrl}/api/v2/release/${preAuth.body.transactionId}`, {
      method: 'POST',
      headers: { 'x-api-key': h.merchant.apiKey, 'content-type': 'application/json' },
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(200);
    // WooCommerce reads code and sourceTransaction.releasedAmount.
    expect(body).toMatchObject({ code: 'BYRD200', sourceTransaction: { releasedAmount: '40.00' } });
  });
});

/**
 * paybyrd/threedsecure-service-js retries postAuth while it answers 409 and hands the first 200 to
 * the merchant's page: a 200 must never come before the payment the challenge allowed is settled.
 */
describe('postAuth while the acquirer is still deciding', () => {
  let h: PaymentsHarness;

  beforeAll(async () => {
    h = await PaymentsHarness.start({ SANDBOX_ACQUIRER_DELAY_MS: '1500' }, { publicBaseIsSelf: true });
  });
  afterAll(() => h?.stop());

  it('answers 409 until the payment is settled, then Success', async () => {
    const payment = await h.pay(CHALLENGE_CARD);
    const id = payment.body.threeDSecure.id as string;
    const call = (path: string) =>
      fetch(`${h.paymentsUrl}/3ds/api${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
    await call(`/v2/${id}/preAuth`);
    const auth = await call(`/v1/${id}/auth`);
    const answered = answerChallenge(id, auth.json.data, '1234'); // the acquirer holds its answer 1.5 s

    // Once the payment is at the acquirer, its row is held here so that its answer cannot be recorded
    // before postAuth is asked: 20 polls, then postAuth, had to fit in that 1.5 s on a loaded machine.
    const hold = h.payments.get(DataSource).createQueryRunner();
    let inFlight: { status: number; json: any } | undefined;
    try {
      for (const deadline = Date.now() + 15_000; ; ) {
        await hold.startTransaction();
        const atAcquirer = await hold.query(
          `SELECT 1 FROM transactions WHERE id = $1 AND acquirer_pending_since IS NOT NULL FOR UPDATE`,
          [payment.body.transactionId],
        );
        if (atAcquirer.length > 0) break;
        await hold.rollbackTransaction();
        if (Date.now() > deadline) throw new Error('The payment never reached the acquirer');
        await new Promise((r) => setTimeout(r, 20));
      }
      inFlight = await call(`/v2/${id}/postAuth`);
    } finally {
      if (hold.isTransactionActive) await hold.commitTransaction();
      await hold.release();
    }
    expect(inFlight).toMatchObject({ status: 409, json: { code: 'BYRD201' } });

    await answered;
    const settled = await call(`/v2/${id}/postAuth`);
    expect(settled.status).toBe(200);
    expect(settled.json.data).toMatchObject({ status: 'Authorized', paymentStatus: 'Success' });
  });
});

/** The issuer's challenge page in its iframe (the SDK posts `creq` to challengeUrl), then the shopper's code. */
async function answerChallenge(
  id: string,
  auth: { challengeUrl: string; challengeId: string; challengeVersion: string },
  otp: string,
): Promise<void> {
  const creq = Buffer.from(
    JSON.stringify({
      threeDSServerTransID: id,
      acsTransID: auth.challengeId,
      messageVersion: auth.challengeVersion,
      messageType: 'CReq',
      challengeWindowSize: '05',
    }),
  ).toString('base64url');
  const page = await postForm(auth.challengeUrl, { creq });
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`No challenge form in: ${page.slice(0, 300)}`);
  await postForm(action, { threeDSServerTransID: id, otp, action: 'submit' });
}

async function postForm(url: string, fields: Record<string, string>): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return response.text();
}
