#!/usr/bin/env node
// `npm run cli -- <command>`: the platform's admin CLI (merchants, API keys), e.g.
//   npm run cli -- merchants create --name "Sandbox Merchant" --mode sandbox --json
//   npm run cli -- keys verify <apiKey>
// The CLI lives in libs/platform (src/cli/main.ts, exporting runCli(argv) -> exit code). This
// wrapper builds @byrd/platform first when its dist is missing, then runs it. It reads NATS_URL
// (default nats://127.0.0.1:4222).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI_ENTRY = join(ROOT, 'libs/platform/dist/cli/main.js');

function buildPlatform() {
  console.error('Building @byrd/platform (its CLI is not built yet)...');
  // Build output goes to stderr: stdout belongs to the CLI (e.g. its --json line).
  const result = spawnSync(
    'npx',
    ['--no', 'turbo', 'run', 'build', '--filter=@byrd/platform', '--output-logs=errors-only'],
    { cwd: ROOT, stdio: ['ignore', process.stderr, process.stderr] },
  );
  return result.status === 0;
}

async function main() {
  if (!existsSync(CLI_ENTRY) && !buildPlatform()) {
    console.error('Building @byrd/platform failed (see above).');
    return 1;
  }
  if (!existsSync(CLI_ENTRY)) {
    console.error(
      'libs/platform/dist/cli/main.js is missing after the build: does libs/platform/src/cli/main.ts exist?',
    );
    return 1;
  }
  const { runCli } = await import(pathToFileURL(CLI_ENTRY).href);
  if (typeof runCli !== 'function') {
    console.error('libs/platform/dist/cli/main.js does not export runCli(argv).');
    return 1;
  }
  return runCli(process.argv.slice(2));
}

process.exit(await main());
