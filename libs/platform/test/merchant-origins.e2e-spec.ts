import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MerchantDirectory } from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';

/** A merchant's checkout origins as the services read them, from the shared KV bucket (real NATS). */
describe('checkout origins stored before hosts were checked', () => {
  let env: TestEnvironment;
  let directory: MerchantDirectory;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    directory = new MerchantDirectory(
      await env.nats.kv(`MERCHANTS_${env.id}`),
      await env.nats.kv(`API_KEYS_${env.id}`),
    );
  });
  afterAll(() => env?.cleanup());

  it('are left out, and logged once per merchant so the operator can have the list set again', async () => {
    const { merchant } = await directory.create('Old Shop', 'live');
    // Written straight to the record, as PUT /api/v2/checkout-origins now refuses them.
    const merchants = await env.nats.kv(`MERCHANTS_${env.id}`);
    const stored = ['https://*', 'https://shop.example.com', 'https://a.com;sandbox'];
    await merchants.put(merchant.merchantId, JSON.stringify({ ...merchant, checkoutOrigins: stored }));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await directory.checkoutOrigins(merchant.merchantId)).toEqual(['https://shop.example.com']);
      expect(await directory.checkoutOrigins(merchant.merchantId)).toEqual(['https://shop.example.com']);
      expect(warn.mock.calls.map(([message]) => message)).toEqual([
        `Merchant ${merchant.merchantId}: checkout origins stored before hosts were checked are left out: ` +
          '"https://*", "https://a.com;sandbox"',
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
