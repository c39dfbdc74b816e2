import { generateRpcKeyPair, loadConfig } from '@byrd/platform';
import { checkoutConfigSchema } from './config.js';

const signingKey = generateRpcKeyPair().privateKey;

describe('hosted-form-bff config', () => {
  it('starts on port 3005 with an embeddable-by-HTTPS default and the local 3DS SDK', () => {
    const config = loadConfig(checkoutConfigSchema, { RPC_SIGNING_KEY: signingKey });
    expect(config).toMatchObject({
      HTTP_PORT: 3005,
      CHECKOUT_FRAME_ANCESTORS: "'self' https:",
      THREE_DS_SDK_URL: 'http://127.0.0.1:8080/3ds/sdk.js',
      RATE_LIMIT_WINDOW_MS: 60_000,
      RATE_LIMIT_MAX: 120,
      RATE_LIMIT_PAYMENTS_MAX: 10,
      RATE_LIMIT_ORDER_PAYMENTS_MAX: 10,
      RATE_LIMIT_BUCKET: 'RATE_LIMITS',
    });
    expect(config).not.toHaveProperty('DATABASE_URL');
  });

  it('refuses to start without the key that signs card payments', () => {
    expect(() => loadConfig(checkoutConfigSchema, {})).toThrow('RPC_SIGNING_KEY is required but not set.');
  });

  it.each([
    "'self' https://shop.example.com https://*.example.com:8443 http://127.0.0.1:*",
    "'none'",
    'https:',
  ])('accepts the frame-ancestors sources %s', (sources) => {
    expect(
      loadConfig(checkoutConfigSchema, { RPC_SIGNING_KEY: signingKey, CHECKOUT_FRAME_ANCESTORS: sources })
        .CHECKOUT_FRAME_ANCESTORS,
    ).toBe(sources);
  });

  it.each(["'self'; script-src *", 'https://a.example,https://b.example', "'unsafe-inline'"])(
    'names CHECKOUT_FRAME_ANCESTORS when it is not a list of sources: %s',
    (sources) => {
      expect(() =>
        loadConfig(checkoutConfigSchema, { RPC_SIGNING_KEY: signingKey, CHECKOUT_FRAME_ANCESTORS: sources }),
      ).toThrow(/CHECKOUT_FRAME_ANCESTORS is invalid/);
    },
  );

  it('names a bad THREE_DS_SDK_URL or rate limit', () => {
    expect(() =>
      loadConfig(checkoutConfigSchema, { RPC_SIGNING_KEY: signingKey, THREE_DS_SDK_URL: 'ftp://x/sdk.js' }),
    ).toThrow(/THREE_DS_SDK_URL is invalid/);
    expect(() =>
      loadConfig(checkoutConfigSchema, { RPC_SIGNING_KEY: signingKey, RATE_LIMIT_MAX: '0' }),
    ).toThrow(/RATE_LIMIT_MAX is invalid/);
  });
});
