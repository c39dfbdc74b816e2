import { jest } from '@jest/globals';
import { runVaultCli } from './vault-cli.js';

/** What a script calling `npm run cli -- vault ...` sees: the exit code and where the usage went. */
async function run(...argv: string[]) {
  const out = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const err = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const code = await runVaultCli(argv, {});
    return { code, out: out.mock.calls.join('\n'), err: err.mock.calls.join('\n') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('vault CLI', () => {
  it('answers an unknown flag, an unknown command or none with exit 1 and the usage on stderr; --help on stdout', async () => {
    for (const argv of [['--bogus'], ['rotate-kek', '--batch-size'], ['nonsense'], []]) {
      const answer = await run(...argv);
      expect(answer).toMatchObject({ code: 1, out: '' });
      expect(answer.err).toContain('Usage: npm run cli -- vault <command>');
    }
    const help = await run('--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('Usage: npm run cli -- vault <command>');
  });

  it('prints a new KEK entry', async () => {
    const answer = await run('new-kek', '--id', 'k2');
    expect(answer.code).toBe(0);
    expect(answer.out).toMatch(/^k2:[A-Za-z0-9+/]{43}=$/);
  });

  it('refuses an id VAULT_KEKS could not hold, instead of an entry that keeps the replicas from starting', async () => {
    for (const id of ['key 2', 'k,2', 'k'.repeat(33)]) {
      const answer = await run('new-kek', '--id', id);
      expect(answer).toMatchObject({ code: 1, out: '' });
      expect(answer.err).toContain('is not a KEK id');
    }
  });
});
