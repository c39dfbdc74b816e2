import { parseArgs } from 'node:util';
import { ByrdApiError } from '../errors.js';
import { DEFAULT_BASE_URL } from '../http.js';
import { listen } from '../listen.js';
import { runTrigger, TRIGGERABLE_EVENTS } from './trigger.js';

export const USAGE = `Usage: byrd <command> [options]     (in this repository: npm run cli -- <command> ...)

Commands:
  listen --forward-to <url> [--events <a,b>]
      Streams your sandbox webhooks to a local address (nothing needs to reach your machine),
      signed as real deliveries are: verify them with the secret it prints.
  trigger <event>
      Produces a real event in the sandbox by running the flow that causes it
      (e.g. trigger order.paid creates an order and pays it). Events: trigger --list

Options:
  --api-key <key>     a sandbox API key (default: $BYRD_API_KEY)
  --base-url <url>    the platform's address (default: $BYRD_BASE_URL or ${DEFAULT_BASE_URL})
  -h, --help          this text
`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Ends `listen` (Ctrl-C in a terminal). */
  signal?: AbortSignal;
}

const defaultIo = (): CliIo => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});

/** The merchant's CLI: returns the exit code (0 done, 1 refused or failed, usage on stderr). */
export async function runCli(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        'api-key': { type: 'string' },
        'base-url': { type: 'string' },
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        list: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const apiKey = values['api-key'] ?? io.env.BYRD_API_KEY;
  const baseUrl = values['base-url'] ?? io.env.BYRD_BASE_URL ?? DEFAULT_BASE_URL;
  try {
    switch (command) {
      case 'listen': {
        if (rest.length > 0) return usage(io, `listen takes no argument (got ${rest.join(' ')})`);
        if (!values['forward-to']) return usage(io, 'listen needs --forward-to <url>');
        if (!apiKey) return usage(io, 'an API key is needed: --api-key or $BYRD_API_KEY');
        return await runListen(io, {
          apiKey,
          baseUrl,
          forwardTo: values['forward-to'],
          events: values.events,
        });
      }
      case 'trigger': {
        if (values.list) {
          for (const event of TRIGGERABLE_EVENTS) io.out(event);
          return 0;
        }
        if (rest.length !== 1) return usage(io, 'trigger needs one event name, e.g. trigger order.paid');
        if (!apiKey) return usage(io, 'an API key is needed: --api-key or $BYRD_API_KEY');
        return await runTrigger(rest[0], { apiKey, baseUrl }, io);
      }
      case undefined:
        return usage(io, 'no command given');
      default:
        return usage(io, `unknown command "${command}"`);
    }
  } catch (error) {
    io.err(error instanceof ByrdApiError ? error.toString() : `Failed: ${(error as Error).message ?? error}`);
    return 1;
  }
}

function usage(io: CliIo, problem: string): number {
  io.err(`${problem}\n\n${USAGE}`);
  return 1;
}

async function runListen(
  io: CliIo,
  options: { apiKey: string; baseUrl: string; forwardTo: string; events?: string },
): Promise<number> {
  let forwardTo: URL;
  try {
    forwardTo = new URL(options.forwardTo);
  } catch {
    return usage(io, `--forward-to is not a URL: ${options.forwardTo}`);
  }
  await listen({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    forwardTo: forwardTo.href,
    events: options.events?.split(',').map((name) => name.trim()),
    signal: io.signal,
    onReady: ({ signingSecret }) =>
      io.out(`Ready. Forwarding webhooks to ${forwardTo.href}; their signing secret is ${signingSecret}`),
    onForwarded: ({ delivery, status, error, durationMs }) =>
      io.out(`${delivery.event} ${delivery.id} -> ${status ?? `failed (${error})`} in ${durationMs} ms`),
    onReconnecting: (reason, retryInMs) => io.err(`Stream lost (${reason}); reconnecting in ${retryInMs} ms`),
  });
  return 0;
}
