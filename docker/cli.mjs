#!/usr/bin/env node
// The operator CLI inside a service image (WORKDIR-independent):
//   node /app/cli.mjs nats provision          (the Helm hook Job)
//   node /app/cli.mjs merchants create --name "Shop" --mode live
// It runs libs/platform's CLI (src/cli/main.ts, runCli(argv) -> exit code) from the built dist/,
// which every service image carries. Environment: NATS_URL, NATS_USER, NATS_PASSWORD,
// NATS_SUBJECT_PREFIX, EVENTS_STREAM, API_KEYS_BUCKET, MERCHANTS_BUCKET.
import { runCli } from './libs/platform/dist/cli/main.js';

try {
  process.exit(await runCli(process.argv.slice(2)));
} catch (error) {
  console.error(`cli: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
