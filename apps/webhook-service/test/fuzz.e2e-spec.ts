import { DataSource } from 'typeorm';
import { describeFuzzing, FINGERPRINT_EXCLUDED } from '@byrd/platform/testing/fuzz';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

describeFuzzing(
  'webhook-service',
  async () => {
    const h = await WebhookHarness.start();
    const receiver = await Receiver.start();
    const setting = await h.subscribe({ url: receiver.url, events: ['order.paid'] });
    const event = await h.publish('order.paid');
    const [webhook] = await h.waitForRow<{ id: string }>(
      `SELECT id FROM webhooks WHERE status = 'succeeded' AND reference_ids @> ARRAY[$1]::text[]`,
      [event.data.orderId],
      (rows) => rows.length === 1,
    );
    return {
      baseUrl: h.baseUrl,
      databaseUrl: (h.app.get(DataSource).options as { url: string }).url,
      // Deliveries (and resends the fuzzer asks for) change the delivery tables on their own
      // schedule; what a refused request must never touch is the merchant's settings.
      excludeTables: [...FINGERPRINT_EXCLUDED, 'webhooks', 'webhook_attempts', 'webhook_resends'],
      options: {
        headers: { 'x-api-key': h.merchant.apiKey },
        examples: {
          'POST /api/v1/settings': [
            {
              url: receiver.url,
              credentialType: 'api-key',
              events: ['order.paid'],
              paymentMethods: ['card'],
            },
            {
              url: receiver.url,
              credentialType: 'basic',
              username: 'shop',
              password: 'secret',
              storeId: '7',
            },
          ],
          'POST /api/v1/webhooks/resend': [{ ids: [webhook.id] }, { Ids: [webhook.id], Url: receiver.url }],
        },
        pathValues: { id: [setting.id], webhookId: [webhook.id] },
        skip: (operation) => operation === 'GET /metrics',
      },
      mustSee: [201, 400],
      stop: async () => {
        await receiver.stop();
        await h.stop();
      },
    };
  },
);
