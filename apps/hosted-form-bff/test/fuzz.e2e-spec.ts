import { describeFuzzing } from '@byrd/platform/testing/fuzz';
import { futureExpiry } from '@byrd/platform/testing';
import { CheckoutHarness, standInWebDir } from './harness.js';

const card = { number: '4242424242424242', expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' };

describeFuzzing('hosted-form-bff', async () => {
  const h = await CheckoutHarness.start({ logLevel: 'warn', webDir: standInWebDir() });
  const orders = [];
  for (let i = 0; i < 4; i++) orders.push(await h.createOrder());
  return {
    baseUrl: h.bffUrl,
    // The form's backend keeps nothing; what it changes is payments' (orders follows payments'
    // events on its own schedule, so its tables cannot be compared request by request).
    databaseUrl: await h.env.database('payments'),
    options: {
      headers: { 'x-checkout-key': orders[0].checkoutKey },
      examples: {
        'POST /checkout/api/v2/orders/{orderId}/payments': [
          { type: 'card', card },
          { type: 'card', card: { ...card, number: '4000000000000002' }, saveCard: true },
          { type: 'multibanco' },
        ],
        'POST /checkout/api/v2/orders/{orderId}/cancel': [{}],
      },
      pathValues: { orderId: orders.map((o) => o.orderId) },
      pages: (operation) => !operation.includes('/checkout/api/'),
    },
    // The first run pays (or cancels) the order the key opens; the second finds it closed.
    mustSee: [400],
    stop: () => h.stop(),
  };
});
