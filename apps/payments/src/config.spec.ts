import { ConfigError, loadConfig } from '@byrd/platform';
import { paymentsConfigSchema } from './config.js';

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
});
