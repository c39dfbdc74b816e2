import { ConfigError, loadConfig } from '@byrd/platform';
import { paymentsConfigSchema, REQUIRED_IN_PRODUCTION } from './config.js';

const ENV = { DATABASE_URL: 'postgres://127.0.0.1/payments', NATS_URL: 'nats://127.0.0.1:4222' };

describe('payments configuration', () => {
  it('chooses the sandbox acquirer and 3DS server unless told otherwise', () => {
    const config = loadConfig(paymentsConfigSchema, ENV);
    expect(config.ACQUIRER).toBe('sandbox');
    expect(config.THREE_DS_PROVIDER).toBe('sandbox');
  });

  it.each([
    ['ACQUIRER', 'adyen', 'ACQUIRER is invalid: must name an acquirer that ships: sandbox.'],
    [
      'THREE_DS_PROVIDER',
      'netcetera',
      'THREE_DS_PROVIDER is invalid: must name a 3DS server that ships: sandbox.',
    ],
  ])('refuses to start with %s=%s, naming the variable and what ships', (name, value, message) => {
    const start = () => loadConfig(paymentsConfigSchema, { ...ENV, [name]: value });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(`Cannot start: ${message}`);
  });

  it("limits browsers' checkout-key payment attempts with the hosted form's defaults, in its bucket", () => {
    expect(loadConfig(paymentsConfigSchema, ENV)).toMatchObject({
      RATE_LIMIT_BUCKET: 'RATE_LIMITS',
      RATE_LIMIT_WINDOW_MS: 60_000,
      RATE_LIMIT_PAYMENTS_MAX: 10,
      RATE_LIMIT_ORDER_PAYMENTS_MAX: 10,
    });
  });

  it.each([
    ['RATE_LIMIT_ORDER_PAYMENTS_MAX', '0'],
    ['RATE_LIMIT_PAYMENTS_MAX', 'ten'],
    ['RATE_LIMIT_WINDOW_MS', '-1'],
    ['RATE_LIMIT_BUCKET', 'rate.limits'],
  ])('refuses to start with %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig(paymentsConfigSchema, { ...ENV, [name]: value })).toThrow(`${name} is invalid`);
  });

  it('refuses to start in production with a card-seal key made up per process (a challenge ends on another replica)', () => {
    const production = { ...ENV, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pay.example.com' };
    // Outside production a key of its own is made up, as for `npm start`.
    expect(loadConfig(paymentsConfigSchema, ENV, REQUIRED_IN_PRODUCTION).CARD_SEAL_KEY).toHaveLength(44);
    expect(() => loadConfig(paymentsConfigSchema, production, REQUIRED_IN_PRODUCTION)).toThrow(
      'CARD_SEAL_KEY is required when NODE_ENV is production.',
    );
  });
});
