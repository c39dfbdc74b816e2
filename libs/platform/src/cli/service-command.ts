import { parseArgs } from 'node:util';

/** Prints `message` on stderr; the exit code of a refused command. */
export function refuseCommand(message: string): number {
  console.error(message);
  return 1;
}

/**
 * The command line of a service's own operator CLI (`npm run cli -- vault ...`, `webhooks ...`):
 * its command and string flags, or the exit code already answered: 0 for `--help` (the usage on
 * stdout), 1 for an unknown flag, a flag without its value or no command (the usage on stderr).
 */
export function parseServiceCommand<const Flags extends string>(
  argv: string[],
  flags: readonly Flags[],
  usage: string,
): { command: string; values: Partial<Record<Flags, string>> } | number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...Object.fromEntries(flags.map((flag) => [flag, { type: 'string' as const }])),
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return refuseCommand(`${(error as Error).message}\n\n${usage}`);
  }
  if (parsed.values.help) {
    console.log(usage);
    return 0;
  }
  const [command] = parsed.positionals;
  if (!command) return refuseCommand(usage);
  return { command, values: parsed.values as Partial<Record<Flags, string>> };
}
