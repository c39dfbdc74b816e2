// The exact requests Paybyrd's public clients send to the orders API, checking every field those
// clients read. Each case names the client and the file its shape comes from.
import { OrdersHarness } from './harness.js';

describe('orders as the public clients call it', () => {
  let h: OrdersHarness;

  beforeAll(async () => {
    h = await OrdersHarness.start();
  });
  afterAll(() => h?.stop());

  const post = (body: unknown) => h.request('POST', '/api/v2/orders', body, { accept: 'application/json' });

  /**
   * paybyrd/ai-agent-toolkit-js, packages/core/src/parameters.ts (createPaymentLinkParameters) and
   * functions.ts (createPaymentLink POSTs them to /orders as they are; retrieveOrder reads the
   * order back): methods in capitals, the expiry and the notification channels in orderOptions,
   * `whatsapp` spelt in lower case, and a personId the API does not use.
   */
  const toolkitOrder = {
    personId: 1001,
    isoAmount: 4990,
    currency: 'EUR',
    orderRef: '3f1c9a52-2b7e-4d1e-9d4f-5a0c4c1b2e7a',
    shopper: { firstName: 'Ana', lastName: 'Silva' },
    orderOptions: {
      notifyBy: {
        email: { address: 'ana@example.com' },
        sms: { phoneCountryCode: 351, phoneNumber: '910000000' },
        whatsapp: { phoneCountryCode: 351, phoneNumber: '910000000' },
      },
      redirectUrl: 'https://shop.example.com/return',
      culture: 'pt-PT',
      expiresIn: '01:00:00',
    },
    paymentOptions: { allowedPaymentMethods: ['CARD', 'MBWAY', 'SIBS_MULTIBANCO'] },
  };

  it("creates the AI toolkit's payment link: its methods in any case, its expiry and notifyBy honoured", async () => {
    const created = await post(toolkitOrder);
    expect(created.status).toBe(201);
    // createPaymentLink reads checkoutUrl and orderId.
    expect(created.body.checkoutUrl).toContain(created.body.orderId);
    // One hour, as orderOptions.expiresIn asked (not the 15-minute default).
    const lifetime = Date.parse(created.body.expiresAt) - Date.parse(created.body.orderDate);
    expect(lifetime).toBeGreaterThan(59 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60_000);
    expect(created.body.paymentOptions.allowedPaymentMethods).toEqual(['card', 'mbway', 'multibanco']);

    // retrieveOrder's declared answer: orderOptions.{redirectUrl, culture, expiresIn, notifyBy.{email, whatsApp, sms}}.
    const read = await h.request('GET', `/api/v2/orders/${created.body.orderId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      orderId: created.body.orderId,
      status: 'created',
      checkoutUrl: created.body.checkoutUrl,
      amount: '49.90',
      currency: 'EUR',
      orderRef: toolkitOrder.orderRef,
      shopper: { firstName: 'Ana', lastName: 'Silva' },
      orderOptions: {
        redirectUrl: 'https://shop.example.com/return',
        culture: 'pt-PT',
        expiresIn: '01:00:00',
        notifyBy: {
          email: { address: 'ana@example.com' },
          sms: { phoneCountryCode: 351, phoneNumber: '910000000' },
          whatsApp: { phoneCountryCode: 351, phoneNumber: '910000000' },
        },
      },
      code: 'BYRD200',
      description: expect.any(String),
      transactions: [],
    });
    expect(read.body.orderOptions.notifyBy).not.toHaveProperty('whatsapp');
    expect(read.body).not.toHaveProperty('personId');
  });

  it('refuses what it cannot honour with 400 naming the field', async () => {
    const klarna = await post({ ...toolkitOrder, paymentOptions: { allowedPaymentMethods: ['KLARNA'] } });
    expect(klarna.status).toBe(400);
    expect(klarna.body.errors[0].field).toBe('paymentOptions.allowedPaymentMethods');

    const email = await post({
      ...toolkitOrder,
      orderOptions: { ...toolkitOrder.orderOptions, notifyBy: { email: { address: 'not-an-address' } } },
    });
    expect(email.status).toBe(400);
    expect(email.body.errors[0].field).toBe('orderOptions.notifyBy.email.address');

    const twoExpiries = await post({ ...toolkitOrder, expiresIn: '00:30:00' });
    expect(twoExpiries.status).toBe(400);
    expect(twoExpiries.body.errors[0].field).toBe('orderOptions.expiresIn');
    const agreeing = await post({ ...toolkitOrder, expiresIn: 60 });
    expect(agreeing.status).toBe(201);
  });
});
