#!/usr/bin/env node
// `npm run cli -- <command>`: the platform's admin CLI (merchants, API keys), e.g.
//   npm run cli -- merchants create --name "Sandbox Merchant" --mode sandbox --json
//   npm run cli -- keys verify <apiKey>
//   npm run cli -- vault rotate-kek     (the card vault's, apps/gateway-tokens/src/vault-cli.ts: with
//                                        npm start's database and .local/secrets.json keys by default)
//   npm run cli -- webhooks reseal-secrets   (the webhook service's, apps/webhook-service/src/webhooks-cli.ts;
//                                        likewise)
//   npm run cli -- listen --forward-to http://localhost:3000/hooks   (a merchant's: @byrd/client's
//   npm run cli -- trigger order.paid                                 `byrd` CLI, src/cli/main.ts; a
//                                        sandbox key in $BYRD_API_KEY or --api-key, the edge by default)
// The CLI lives in libs/platform (src/cli/main.ts, exporting runCli(argv) -> exit code). This
// wrapper builds @byrd/platform first when its dist is missing, then runs it. It reads NATS_URL
// (default nats://127.0.0.1:4222).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI_ENTRY = join(ROOT, 'libs/platform/dist/cli/main.js');
const VAULT_CLI_ENTRY = join(ROOT, 'apps/gateway-tokens/dist/vault-cli.js');
const WEBHOOKS_CLI_ENTRY = join(ROOT, 'apps/webhook-service/dist/webhooks-cli.js');
const MERCHANT_CLI_ENTRY = join(ROOT, 'libs/client/dist/cli/main.js');
/** The merchant's commands (the published `byrd` CLI of @byrd/client); the rest are the operator's. */
const MERCHANT_COMMANDS = new Set(['listen', 'trigger']);
const SECRETS_FILE = join(ROOT, '.local/secrets.json');

function build(workspace) {
  console.error(`Building ${workspace} (its CLI is not built yet)...`);
  // Build output goes to stderr: stdout belongs to the CLI (e.g. its --json line).
  const result = spawnSync(
    'npx',
    ['--no', 'turbo', 'run', 'build', `--filter=${workspace}`, '--output-logs=errors-only'],
    { cwd: ROOT, stdio: ['ignore', process.stderr, process.stderr] },
  );
  return result.status === 0;
}

/** A service's keys and database as npm start runs it, unless the environment names others. */
function localServiceEnv(service) {
  const secrets = existsSync(SECRETS_FILE) ? JSON.parse(readFileSync(SECRETS_FILE, 'utf8')) : {};
  const host = process.env.PGHOST ?? '127.0.0.1';
  const database = `byrd_${service.replaceAll('-', '_')}`;
  return {
    DATABASE_URL: `postgres://${process.env.PGUSER ?? 'postgres'}@${host}:${process.env.PGPORT ?? '5432'}/${database}`,
    ...(secrets[service] ?? {}),
    ...process.env,
  };
}

/**
 * A service's own operator CLI (`vault`, `webhooks`): built when missing, run on that service's local
 * database and keys (`localServiceEnv`).
 */
async function runServiceCli(service, entry, exportName, argv) {
  if (!existsSync(entry) && !build(`@byrd/${service}`)) {
    console.error(`Building @byrd/${service} failed (see above).`);
    return 1;
  }
  const module = await import(pathToFileURL(entry).href);
  return module[exportName](argv, localServiceEnv(service));
}

async function runMerchant(argv) {
  if (!existsSync(MERCHANT_CLI_ENTRY) && !build('@byrd/client')) {
    console.error('Building @byrd/client failed (see above).');
    return 1;
  }
  const { runCli } = await import(pathToFileURL(MERCHANT_CLI_ENTRY).href);
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  return runCli(argv, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    signal: stop.signal,
  });
}

async function main() {
  if (process.argv[2] === 'vault')
    return runServiceCli('gateway-tokens', VAULT_CLI_ENTRY, 'runVaultCli', process.argv.slice(3));
  if (process.argv[2] === 'webhooks')
    return runServiceCli('webhook-service', WEBHOOKS_CLI_ENTRY, 'runWebhooksCli', process.argv.slice(3));
  if (MERCHANT_COMMANDS.has(process.argv[2])) return runMerchant(process.argv.slice(2));
  if (!existsSync(CLI_ENTRY) && !build('@byrd/platform')) {
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
