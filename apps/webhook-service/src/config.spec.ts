import { ConfigError, loadConfig } from '@byrd/platform';
import { webhookConfigSchema } from './config.js';

const ENV = {
  DATABASE_URL: 'postgres://127.0.0.1/webhooks',
  WEBHOOK_SECRETS_KEYS: Buffer.alloc(32, 7).toString('base64'),
};

describe('webhook-service configuration', () => {
  it('caps live webhook settings at 100 per merchant unless told otherwise', () => {
    expect(loadConfig(webhookConfigSchema, ENV).WEBHOOK_SETTINGS_MAX_PER_MERCHANT).toBe(100);
    const three = loadConfig(webhookConfigSchema, { ...ENV, WEBHOOK_SETTINGS_MAX_PER_MERCHANT: '3' });
    expect(three.WEBHOOK_SETTINGS_MAX_PER_MERCHANT).toBe(3);
  });

  it.each(['0', '-1', '2.5', 'many', '10001'])(
    'refuses to start with WEBHOOK_SETTINGS_MAX_PER_MERCHANT=%s, naming the variable',
    (value) => {
      const start = () =>
        loadConfig(webhookConfigSchema, { ...ENV, WEBHOOK_SETTINGS_MAX_PER_MERCHANT: value });
      expect(start).toThrow(ConfigError);
      expect(start).toThrow('WEBHOOK_SETTINGS_MAX_PER_MERCHANT is invalid');
    },
  );

  it('caps queued resends at 1 000 per merchant unless told otherwise, and refuses a cap that is no number', () => {
    expect(loadConfig(webhookConfigSchema, ENV).WEBHOOK_RESENDS_MAX_PER_MERCHANT).toBe(1_000);
    expect(
      loadConfig(webhookConfigSchema, { ...ENV, WEBHOOK_RESENDS_MAX_PER_MERCHANT: '5' })
        .WEBHOOK_RESENDS_MAX_PER_MERCHANT,
    ).toBe(5);
    for (const value of ['0', 'lots', '2.5'])
      expect(() =>
        loadConfig(webhookConfigSchema, { ...ENV, WEBHOOK_RESENDS_MAX_PER_MERCHANT: value }),
      ).toThrow('WEBHOOK_RESENDS_MAX_PER_MERCHANT is invalid');
  });
});
