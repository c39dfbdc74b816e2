import { DataSource } from 'typeorm';
import { describeFuzzing } from '@byrd/platform/testing/fuzz';
import { OrdersHarness } from './harness.js';

const order = {
  isoAmount: 2500,
  currency: 'EUR',
  orderRef: 'fuzz-1',
  shopper: { firstName: 'Ana', email: 'ana@example.com', phoneNumber: '+351910000000' },
  orderOptions: { redirectUrl: 'https://shop.example.com/return', culture: 'pt-PT' },
  paymentOptions: { allowedPaymentMethods: ['card', 'multibanco'] },
  metadata: { basket: '42' },
  expiresIn: '00:30:00',
};

describeFuzzing('orders', async () => {
  const h = await OrdersHarness.start();
  const orderIds = [(await h.createOrder()).body.orderId, (await h.createOrder()).body.orderId];
  return {
    baseUrl: h.baseUrl,
    databaseUrl: (h.app.get(DataSource).options as { url: string }).url,
    options: {
      headers: { 'x-api-key': h.merchant.apiKey },
      examples: { 'POST /api/v2/orders': [order] },
      pathValues: { orderId: orderIds },
    },
    mustSee: [201, 400],
    stop: () => h.stop(),
  };
});
