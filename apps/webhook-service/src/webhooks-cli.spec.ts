import { jest } from '@jest/globals';
import { runWebhooksCli } from './webhooks-cli.js';

/** What a script calling `npm run cli -- webhooks ...` sees: the exit code and where the text went. */
async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const err = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const code = await runWebhooksCli(argv, env);
    return { code, out: out.mock.calls.join('\n'), err: err.mock.calls.join('\n') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('webhooks CLI', () => {
  it('answers an unknown flag, an unknown command or none with exit 1 and the usage on stderr; --help on stdout', async () => {
    for (const argv of [['--bogus'], ['reseal-secrets', '--batch-size'], ['nonsense'], []]) {
      const answer = await run(argv);
      expect(answer).toMatchObject({ code: 1, out: '' });
      expect(answer.err).toContain('Usage: npm run cli -- webhooks <command>');
    }
    const help = await run(['--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('webhooks reseal-secrets [--batch-size N]');
  });

  it('names what is missing or wrong before touching the database', async () => {
    expect(await run(['reseal-secrets', '--batch-size', '0'])).toMatchObject({
      code: 1,
      err: '--batch-size must be a positive integer',
    });
    const missing = await run(['reseal-secrets']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('DATABASE_URL is required but not set.');
    expect(missing.err).toContain('WEBHOOK_SECRETS_KEYS is required but not set.');
    const badKey = await run(['reseal-secrets'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none',
      WEBHOOK_SECRETS_KEYS: 'c2hvcnQ=',
    });
    expect(badKey).toMatchObject({ code: 1, out: '' });
    expect(badKey.err).toContain('WEBHOOK_SECRETS_KEYS is invalid: key 1 is not 32 bytes of base64.');
  });
});
