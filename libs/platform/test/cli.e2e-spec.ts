import { runCli } from '../src/cli/main.js';
import { ApiKeyStore } from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';

/** `npm run cli -- …` against the real NATS KV buckets of this test run. */
describe('operator CLI', () => {
  let env: TestEnvironment;
  let cliEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const vars = await env.serviceEnv('cli');
    cliEnv = {
      NATS_URL: vars.NATS_URL,
      API_KEYS_BUCKET: vars.API_KEYS_BUCKET,
      MERCHANTS_BUCKET: vars.MERCHANTS_BUCKET,
      EVENTS_STREAM: vars.EVENTS_STREAM,
      NATS_SUBJECT_PREFIX: vars.NATS_SUBJECT_PREFIX,
    };
  });
  afterAll(() => env?.cleanup());

  async function cli(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, cliEnv, { log: (l) => out.push(l), error: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('creates a merchant with a GUID key, verifies it, and revokes it', async () => {
    const created = await cli('merchants', 'create', '--name', 'Padaria Lisboa', '--mode', 'live', '--json');
    expect(created.code).toBe(0);
    const { merchantId, apiKey, mode } = JSON.parse(created.out);
    expect(apiKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(mode).toBe('live');

    const store = new ApiKeyStore(await env.nats.kv(cliEnv.API_KEYS_BUCKET!));
    expect(await store.find(apiKey)).toMatchObject({
      merchantId,
      merchantName: 'Padaria Lisboa',
      mode: 'live',
    });

    expect((await cli('keys', 'verify', apiKey)).code).toBe(0);
    expect((await cli('merchants', 'list')).out).toContain(merchantId);

    const revoked = await cli('keys', 'revoke', apiKey);
    expect(revoked).toMatchObject({ code: 0, out: 'Key revoked.' });
    expect(await store.find(apiKey)).toBeNull();
    expect((await cli('keys', 'verify', apiKey)).code).toBe(1);
    expect((await cli('keys', 'revoke', apiKey)).err).toBe('No such API key');
  });

  it('answers an unknown command, an unknown flag or no command with exit 1 and the usage on stderr; --help on stdout', async () => {
    for (const argv of [
      ['anything-unknown'],
      ['merchants', 'list', '--bogus'],
      ['merchants', 'create', '--name'],
      [],
    ]) {
      const answer = await cli(...argv);
      expect(answer).toMatchObject({ code: 1, out: '' });
      expect(answer.err).toContain('Usage: npm run cli -- <command>');
    }
    expect((await cli('merchants', 'list', '--bogus')).err).toMatch(/^Unknown option '--bogus'/);
    const help = await cli('--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('Usage: npm run cli -- <command>');
  });

  it('issues a second key for an existing merchant only', async () => {
    const { out } = await cli('merchants', 'create', '--name', 'Second', '--json');
    const { merchantId } = JSON.parse(out);
    const extra = await cli('keys', 'create', '--merchant', merchantId, '--json');
    expect(extra.code).toBe(0);
    expect((await cli('keys', 'verify', JSON.parse(extra.out).apiKey)).code).toBe(0);
    expect((await cli('keys', 'create', '--merchant', 'nobody', '--json')).code).toBe(1);
  });

  it('explains what it needs instead of failing obscurely', async () => {
    expect(await cli('merchants', 'create')).toMatchObject({
      code: 1,
      err: 'merchants create needs --name <name>',
    });
    expect((await cli('merchants', 'create', '--name', 'X', '--mode', 'prod')).err).toBe(
      '--mode must be sandbox or live',
    );
    expect((await cli('frobnicate')).err).toContain('Unknown command');
    // The vault's and the webhook service's commands (listed in the usage) say where they run,
    // before touching NATS: a service image's /app/cli.mjs is this CLI.
    expect(await cli('vault', 'rotate-kek')).toMatchObject({
      code: 1,
      err: expect.stringContaining('node dist/vault-cli.js in the gateway-tokens image'),
    });
    const offline = await runCli(
      ['webhooks', 'reseal-secrets'],
      { NATS_URL: 'nats://127.0.0.1:1' },
      {
        log: () => undefined,
        error: () => undefined,
      },
    );
    expect(offline).toBe(1);
  });
});
