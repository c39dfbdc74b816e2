import { runCli, USAGE } from './main.js';

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('byrd CLI: what a script can rely on', () => {
  it.each([
    [['launch'], 'unknown command "launch"'],
    [[], 'no command given'],
    [['listen', '--forward-to', 'http://localhost:3000/hooks', '--verbose'], "Unknown option '--verbose'"],
    [['listen'], 'listen needs --forward-to'],
    [['listen', '--forward-to', 'not a url'], '--forward-to is not a URL'],
    [['trigger'], 'trigger needs one event name'],
    [['trigger', 'order.paid', 'order.created'], 'trigger needs one event name'],
  ])('%j exits 1 with the problem and the usage on stderr, nothing on stdout', async (argv, problem) => {
    const { code, out, err } = await run(argv, { BYRD_API_KEY: '00000000-0000-4000-8000-000000000000' });
    expect(code).toBe(1);
    expect(err).toContain(problem);
    expect(err).toContain(USAGE.trim());
    expect(out).toBe('');
  });

  it('asks for an API key when neither --api-key nor $BYRD_API_KEY gives one', async () => {
    const { code, err } = await run(['listen', '--forward-to', 'http://localhost:3000/hooks']);
    expect(code).toBe(1);
    expect(err).toContain('an API key is needed');
  });

  it('prints the usage on stdout and exits 0 for --help', async () => {
    const { code, out, err } = await run(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('listen --forward-to <url>');
    expect(err).toBe('');
  });
});
