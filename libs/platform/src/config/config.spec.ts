import { baseConfigSchema, ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  const valid = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/byrd_orders' };

  it('applies defaults around the required variables', () => {
    const config = loadConfig(baseConfigSchema, valid);
    expect(config).toMatchObject({
      HTTP_PORT: 3000,
      NATS_URL: 'nats://127.0.0.1:4222',
      EVENTS_STREAM: 'EVENTS',
      API_KEYS_BUCKET: 'API_KEYS',
      OUTBOX_RELAY_ENABLED: true,
    });
  });

  it('stops with a sentence naming a missing variable', () => {
    expect(() => loadConfig(baseConfigSchema, {})).toThrow(
      new ConfigError('Cannot start: DATABASE_URL is required but not set.'),
    );
  });

  it('names every bad variable and says what is wrong with it', () => {
    let message = '';
    try {
      loadConfig(baseConfigSchema, {
        ...valid,
        HTTP_PORT: 'eighty',
        NATS_URL: 'http://nats',
        LOG_LEVEL: 'loud',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('HTTP_PORT is invalid');
    expect(message).toContain('NATS_URL is invalid: must be a nats:// or tls:// or ws:// or wss:// URL');
    expect(message).toContain('LOG_LEVEL is invalid');
  });
});
