// Makes sure the dist/ files a benchmark runs exist: builds everything with turbo when one is
// missing (or always with --build), and warns when a dist/ looks older than its sources.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, fail, note, step, target } from './util.js';

const BUILD_TIMEOUT_MS = 10 * 60_000;

function newestMtime(dir: string): number {
  let newest = 0;
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  if (existsSync(dir)) walk(dir);
  return newest;
}

function runTurboBuild(): Promise<number> {
  const turbo = join(target.root, 'node_modules/.bin/turbo');
  if (!existsSync(turbo)) fail('turbo is not installed: run npm install first.');
  step(`Building (npx turbo run build${target.root === ROOT ? '' : ` in ${target.root}`})`);
  return new Promise<number>((resolveBuild) => {
    const child = spawn(turbo, ['run', 'build', '--output-logs=errors-only'], {
      cwd: target.root,
      stdio: 'inherit',
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), BUILD_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveBuild(code ?? 1);
    });
  });
}

/** Builds when a dist file the benchmark needs (absolute paths) is missing, or always, or never. */
export async function ensureBuilt(
  files: string[],
  mode: 'auto' | 'always' | 'never' = 'auto',
): Promise<void> {
  const missing = () => files.filter((file) => !existsSync(file));
  if (mode === 'always' || (mode === 'auto' && missing().length > 0)) {
    if (mode === 'auto')
      note(
        `not built yet: ${missing()
          .map((f) => relative(target.root, f))
          .join(', ')}`,
      );
    if ((await runTurboBuild()) !== 0)
      fail('The build failed (see above); fix it or run npx turbo run build.');
  }
  const stillMissing = missing();
  if (stillMissing.length > 0) {
    fail(
      `Missing ${stillMissing.map((f) => relative(target.root, f)).join(', ')}: run npx turbo run build ` +
        '(or drop --no-build).',
    );
  }
  // A dist/ older than its sources measures yesterday's code: say so (others may be editing).
  const packages = new Set(files.map((file) => relative(target.root, file).split('/').slice(0, 2).join('/')));
  for (const pkg of packages) {
    const src = newestMtime(join(target.root, pkg, 'src'));
    const dist = newestMtime(join(target.root, pkg, 'dist'));
    if (src > dist)
      note(`warning: ${pkg}/src is newer than ${pkg}/dist; run with --build to measure the current code`);
  }
}

/** { "<pkg>": ISO time of its newest dist/ file } for the packages of `files`: which build a run measured. */
export function distTimes(files: string[]): Record<string, string | null> {
  const packages = new Set(files.map((file) => relative(target.root, file).split('/').slice(0, 2).join('/')));
  return Object.fromEntries(
    [...packages].map((pkg) => {
      const newest = newestMtime(join(target.root, pkg, 'dist'));
      return [pkg, newest ? new Date(newest).toISOString() : null];
    }),
  );
}
