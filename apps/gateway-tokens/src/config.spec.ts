import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '@byrd/platform';
import { tokensConfigSchema } from './config.js';
import { newKekEntry } from './vault/key-ring.js';

/** What a crash-looping pod prints (runHttpService): the ConfigError's message, on every restart. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(tokensConfigSchema, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/byrd_tokens',
      VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 7).toString('base64'),
      ...env,
    });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('VAULT_KEKS', () => {
  it('names a mistyped entry by its position, never printing the key in it', () => {
    const key = randomBytes(32).toString('base64');
    const cases: [string, number][] = [
      [key, 1], // the id forgotten
      [`${newKekEntry('k1')},${key}`, 2],
      [`${newKekEntry('k1')}, ${key.replace(/=+$/, '')}`, 2], // unpadded
      [`${key}:k2`, 1], // the wrong way round
      [`k 2:${key}`, 1], // an id with a space
    ];
    for (const [list, position] of cases) {
      const message = refusal({ VAULT_KEKS: list });
      expect(message).toContain(`VAULT_KEKS is invalid: entry ${position} is not id:base64-key`);
      expect(message).not.toContain(key.slice(0, 16));
    }
  });

  it('names a short key by its id, and a key pasted as VAULT_ACTIVE_KEK without echoing it', () => {
    expect(refusal({ VAULT_KEKS: 'k1:c2hvcnQ=' })).toContain(
      'VAULT_KEKS is invalid: key "k1" is not 32 bytes of base64',
    );
    const key = randomBytes(32).toString('base64');
    const message = refusal({ VAULT_KEKS: newKekEntry('k1'), VAULT_ACTIVE_KEK: key });
    expect(message).toContain('VAULT_ACTIVE_KEK is invalid: must name one of the ids in VAULT_KEKS');
    expect(message).not.toContain(key.slice(0, 16));
  });
});
