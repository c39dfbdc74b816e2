#!/usr/bin/env node
// Copies the route table (deploy/routes.json, the one source) into the chart, which reads it with
// .Files.Get (helm cannot read files outside the chart folder):
//
//   npm run sync-routes -w @byrd/charts
//
// test/routes.test.mjs fails while the two differ, so the Ingress can never drift from the edge.
import { copyFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SOURCE = resolve(ROOT, 'deploy/routes.json');
export const CHART_COPY = resolve(ROOT, 'charts/byrd/files/routes.json');

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  copyFileSync(SOURCE, CHART_COPY);
  console.log(`Copied deploy/routes.json to charts/byrd/files/routes.json`);
}
