#!/usr/bin/env node
// Benchmarks of the platform, against the real PostgreSQL and NATS of this machine:
//
//   npm run bench -- <name> [options]      e.g.  npm run bench -- payments --duration 20
//   npm run bench -- --help                 lists the benchmarks and their options
//
// Each benchmark starts what it measures from the dist/ folders (built with turbo when missing;
// --build rebuilds first, --no-build never builds; --ref <rev> measures a committed revision built
// in a temporary snapshot, untouched by edits in the working tree), in its own databases, stream,
// KV buckets and subject prefix, on free loopback ports; prints a table with PASS/MISS per goal (a benchmark
// reports, it never fails CI: the exit code is 0 unless the run itself broke), writes
// bench/results/<name>-<timestamp>.json, then stops and drops everything it created.
// Shared helpers live in bench/lib/ (processes, ports, environment, stack, load, proc stats, report).
import { parseArgs } from 'node:util';
import { ensureBuilt } from './lib/build.mjs';
import { prepareSnapshot } from './lib/snapshot.mjs';
import { BenchError, paint, setTargetRoot } from './lib/util.mjs';

const BENCHMARKS = {
  payments: {
    description: 'frictionless card payments through the edge, next to a bare Fastify + pg handler (issue 3)',
    load: () => import('./payments.mjs'),
  },
  tokens: {
    description: 'token creation through the edge vs the bare Fastify + pg handler (issue 4)',
    load: () => import('./tokens.mjs'),
  },
  webhooks: {
    description: 'webhook deliveries/s, event-to-receiver latency, claim query cost (issue 5)',
    load: () => import('./webhooks.mjs'),
  },
};

const COMMON_OPTIONS = {
  ref: {
    type: 'string',
    help: 'measure this git revision (e.g. HEAD) built in a temporary snapshot, not the working tree',
  },
  build: { type: 'boolean', default: false, help: 'run npx turbo run build first' },
  'no-build': { type: 'boolean', default: false, help: 'never build; fail when dist/ is missing' },
  help: { type: 'boolean', short: 'h', default: false, help: 'this text' },
};

function usage(specific = {}) {
  const lines = ['Usage: npm run bench -- <benchmark> [options]', '', 'Benchmarks:'];
  for (const [name, bench] of Object.entries(BENCHMARKS)) {
    lines.push(`  ${name.padEnd(10)} ${bench.description}${bench.load ? '' : ' [not yet available]'}`);
  }
  lines.push('', 'Options:');
  for (const [name, option] of Object.entries({ ...specific, ...COMMON_OPTIONS })) {
    const value = option.type === 'string' ? ` <${option.default ?? 'value'}>` : '';
    lines.push(`  --${`${name}${value}`.padEnd(24)} ${option.help ?? ''}`);
  }
  return lines.join('\n');
}

async function main() {
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
  if (!bench.load) {
    console.error(
      `The ${name} benchmark is not written yet: it arrives with its service (${bench.description}).`,
    );
    process.exitCode = 2;
    return;
  }
  const module = await bench.load();
  const specific = module.options ?? {};
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
  let values;
  try {
    ({ values } = parseArgs({ args: argv.slice(1), options: spec, strict: true }));
  } catch (error) {
    console.error(`${error.message}\n\n${usage(specific)}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    console.log(usage(specific));
    return;
  }
  if (values.build && values['no-build'])
    throw new BenchError('--build and --no-build contradict each other.');
  if (values.ref) {
    const { dir, commit } = await prepareSnapshot(values.ref);
    setTargetRoot(dir, { ref: values.ref, commit });
  }
  const requires = typeof module.requires === 'function' ? module.requires() : (module.requires ?? []);
  await ensureBuilt(requires, values.build ? 'always' : values['no-build'] ? 'never' : 'auto');
  await module.run(values);
}

main().catch((error) => {
  if (error instanceof BenchError) console.error(paint('1;31', `\n${error.message}`));
  else console.error(error);
  process.exitCode = 1;
});
