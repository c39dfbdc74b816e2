// Benchmarks of the platform, against the real PostgreSQL and NATS of this machine:
//
//   npm run bench -- <name> [options]      e.g.  npm run bench -- payments --duration 20
//   npm run bench -- --help                 lists the benchmarks and their options
//
// `npm run bench` compiles the harness (tsc -p bench, into bench/dist) and runs this file from there.
// Each benchmark starts what it measures from the dist/ folders (built with turbo when missing;
// --build rebuilds first, --no-build never builds; --ref <rev> measures a committed revision built
// in a temporary snapshot, untouched by edits in the working tree), in its own databases, stream,
// KV buckets and subject prefix, on free loopback ports; prints a table with PASS/MISS per goal (a benchmark
// reports, it never fails CI: the exit code is 0 unless the run itself broke), writes
// bench/results/<name>-<timestamp>.json, then stops and drops everything it created.
// Every benchmark is a list of phases run by bench/core/phase-runner.ts; scenarios/ holds one file
// per benchmark, core/ what they share, payments/, tokens/ and webhooks/ the rest of each.
import { parseArgs } from 'node:util';
import { ensureBuilt } from './core/build.js';
import type { Args, Options, Scenario } from './core/scenario.js';
import { prepareSnapshot } from './core/snapshot.js';
import { BenchError, paint, target } from './core/util.js';

const BENCHMARKS: Record<string, { description: string; load: () => Promise<Scenario> }> = {
  payments: {
    description: 'frictionless card payments through the edge, next to a bare Fastify + pg handler (issue 3)',
    load: async () => (await import('./scenarios/payments.js')).payments,
  },
  tokens: {
    description: 'token creation through the edge vs the bare Fastify + pg handler (issue 4)',
    load: async () => (await import('./scenarios/tokens.js')).tokens,
  },
  webhooks: {
    description: 'webhook deliveries/s, event-to-receiver latency, claim query cost (issue 5)',
    load: async () => (await import('./scenarios/webhooks.js')).webhooks,
  },
};

const COMMON_OPTIONS: Options = {
  ref: {
    type: 'string',
    help: 'measure this git revision (e.g. HEAD) built in a temporary snapshot, not the working tree',
  },
  build: { type: 'boolean', default: false, help: 'run npx turbo run build first' },
  'no-build': { type: 'boolean', default: false, help: 'never build; fail when dist/ is missing' },
  help: { type: 'boolean', short: 'h', default: false, help: 'this text' },
};

function usage(specific: Options = {}): string {
  const lines = ['Usage: npm run bench -- <benchmark> [options]', '', 'Benchmarks:'];
  for (const [name, bench] of Object.entries(BENCHMARKS)) {
    lines.push(`  ${name.padEnd(10)} ${bench.description}`);
  }
  lines.push('', 'Options:');
  for (const [name, option] of Object.entries({ ...specific, ...COMMON_OPTIONS })) {
    const value = option.type === 'string' ? ` <${String(option.default ?? 'value')}>` : '';
    lines.push(`  --${`${name}${value}`.padEnd(24)} ${option.help}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const name = argv[0]?.startsWith('-') ? undefined : argv[0];
  if (!name) {
    console.log(usage());
    process.exitCode = argv.includes('--help') || argv.includes('-h') ? 0 : 2;
    return;
  }
  const bench = BENCHMARKS[name];
  if (!bench) {
    console.error(`Unknown benchmark "${name}".\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  const scenario = await bench.load();
  const specific = scenario.options;
  const spec = Object.fromEntries(
    Object.entries({ ...specific, ...COMMON_OPTIONS }).map(([key, { type, short, multiple, default: d }]) => [
      key,
      {
        type,
        ...(short ? { short } : {}),
        ...(multiple ? { multiple } : {}),
        ...(d !== undefined ? { default: d } : {}),
      },
    ]),
  );
  let values: Args;
  try {
    ({ values } = parseArgs({ args: argv.slice(1), options: spec, strict: true }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage(specific)}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    console.log(usage(specific));
    return;
  }
  if (values.build && values['no-build'])
    throw new BenchError('--build and --no-build contradict each other.');
  if (typeof values.ref === 'string') {
    const { dir, commit } = await prepareSnapshot(values.ref);
    target.root = dir;
    target.revision = { ref: values.ref, commit };
  }
  await ensureBuilt(scenario.requires(), values.build ? 'always' : values['no-build'] ? 'never' : 'auto');
  await scenario.run(values);
}

main().catch((error: unknown) => {
  if (error instanceof BenchError) console.error(paint('1;31', `\n${error.message}`));
  else console.error(error);
  process.exitCode = 1;
});
