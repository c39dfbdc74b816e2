// Whether `npm install` has to run first: shared by `npm start` and `npm test` (Node built-ins only,
// so both work on a fresh clone).
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** node_modules is missing, or older than package-lock.json. */
export function needsNpmInstall() {
  const marker = join(ROOT, 'node_modules/.package-lock.json');
  const lockfile = join(ROOT, 'package-lock.json');
  if (!existsSync(marker) || !existsSync(lockfile)) return true;
  return statSync(lockfile).mtimeMs > statSync(marker).mtimeMs;
}
