import { generateRpcKeyPair } from '../rpc/rpc-identity.js';
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

describe('loadConfig: empty and production-only variables', () => {
  const valid = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/byrd_orders' };

  it('takes a variable set to the empty string as unset, never as 0', () => {
    const config = loadConfig(baseConfigSchema, {
      ...valid,
      SHUTDOWN_GRACE_MS: '',
      DATABASE_STATEMENT_TIMEOUT_MS: '',
      NATS_URL: '',
    });
    expect(config).toMatchObject({
      SHUTDOWN_GRACE_MS: 10_000,
      DATABASE_STATEMENT_TIMEOUT_MS: 30_000,
      NATS_URL: 'nats://127.0.0.1:4222',
    });
    expect(() => loadConfig(baseConfigSchema, { DATABASE_URL: '' })).toThrow(
      new ConfigError('Cannot start: DATABASE_URL is required but not set.'),
    );
  });

  it('needs the variables a service names in production, and only there', () => {
    const needed = ['NATS_URL', 'RPC_SIGNING_KEY'];
    expect(loadConfig(baseConfigSchema, valid, needed).NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(() => loadConfig(baseConfigSchema, { ...valid, NODE_ENV: 'production' }, needed)).toThrow(
      new ConfigError(
        'Cannot start: NATS_URL is required when NODE_ENV is production. ' +
          'RPC_SIGNING_KEY is required when NODE_ENV is production.',
      ),
    );
    expect(() =>
      loadConfig(
        baseConfigSchema,
        { ...valid, NODE_ENV: 'production', NATS_URL: 'http://nats', RPC_SIGNING_KEY: '' },
        needed,
      ),
    ).toThrow(
      new ConfigError(
        'Cannot start: NATS_URL is invalid: must be a nats:// or tls:// or ws:// or wss:// URL. ' +
          'RPC_SIGNING_KEY is required when NODE_ENV is production.',
      ),
    );
  });
});

describe('TRUSTED_PROXIES', () => {
  const valid = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/byrd_orders' };
  const trusted = (value?: string) =>
    loadConfig(baseConfigSchema, { ...valid, ...(value === undefined ? {} : { TRUSTED_PROXIES: value }) })
      .TRUSTED_PROXIES;

  it('is one hop by default, a hop count, or the proxies by address or CIDR', () => {
    expect(trusted()).toBe(1);
    expect(trusted('2')).toBe(2);
    expect(trusted('0')).toBe(0);
    expect(trusted('10.0.0.0/8, fd00::/8,192.0.2.7')).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of [
      '11',
      'true',
      '10.0.0.0/33',
      'fd00::/129',
      'proxy.internal',
      '10.0.0.1/8/2',
      '10.0.0.1,',
    ])
      expect(() => trusted(bad)).toThrow(/TRUSTED_PROXIES is invalid/);
  });
});

describe('RPC keys', () => {
  const valid = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/byrd_orders' };
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(baseConfigSchema, { ...valid, ...env });
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('never prints a private key pasted into the wrong variable or place', () => {
    const [ours, theirs] = [generateRpcKeyPair(), generateRpcKeyPair()];
    const cases: [Record<string, string>, string][] = [
      [
        { RPC_TRUSTED_CALLERS: `payments:${theirs.publicKey},${ours.privateKey}` },
        'entry 2 is not name:base64-public-key',
      ],
      [
        { RPC_TRUSTED_CALLERS: `orders:${ours.privateKey}` },
        'the key of entry 1 ("orders") is not a base64 Ed25519 public key',
      ],
      [
        { RPC_SIGNING_KEY: ours.publicKey },
        'RPC_SIGNING_KEY is invalid: must be a base64 Ed25519 private key',
      ],
    ];
    for (const [env, problem] of cases) {
      const message = refusal(env);
      expect(message).toContain(problem);
      for (const secret of [ours.privateKey, ours.privateKey.slice(-24)])
        expect(message).not.toContain(secret);
    }
  });
});
