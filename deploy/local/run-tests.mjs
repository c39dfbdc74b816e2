// `npm test`: every workspace's tests through Turborepo, two at a time, after `npm install` when
// node_modules is missing or stale (a fresh clone has no turbo yet). Extra arguments go to turbo:
// `npm test -- --filter=@byrd/orders`.
import { spawnSync } from 'node:child_process';
import { needsNpmInstall, ROOT } from './dependencies.mjs';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
if (needsNpmInstall()) {
  console.log('Installing dependencies (npm install) first');
  // Never `npm ci`: the registry here lacks non-Linux optional packages, which `npm ci` insists on.
  const install = spawnSync(npm, ['install'], { cwd: ROOT, stdio: 'inherit' });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const turbo = spawnSync(
  npm,
  ['exec', '--', 'turbo', 'run', 'test', '--concurrency=2', ...process.argv.slice(2)],
  {
    cwd: ROOT,
    stdio: 'inherit',
  },
);
process.exit(turbo.status ?? 1);
