#!/usr/bin/env node
// Builds the publishable package: JavaScript by tsc, and ONE declaration file (dist/index.d.ts) into
// which dts-bundle-generator inlines the @byrd/contracts types the API uses. @byrd/contracts is a
// private workspace, so a published package may not import it; inlining keeps the client's types
// the platform's own, with no copy to keep in step. Then it checks that nothing in dist still names
// a @byrd/ package.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const run = (script, args) =>
  execFileSync(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit' });

rmSync(join(root, 'dist'), { recursive: true, force: true });
run(require.resolve('typescript/bin/tsc'), ['-p', 'tsconfig.build.json']);
run(require.resolve('dts-bundle-generator/dist/bin/dts-bundle-generator.js'), [
  '--silent',
  '--no-banner',
  '--project',
  'tsconfig.build.json',
  '--external-inlines',
  '@byrd/contracts',
  '--export-referenced-types',
  'false',
  '-o',
  'dist/index.d.ts',
  'src/index.ts',
]);

const leaks = readdirSync(join(root, 'dist'), { recursive: true })
  .filter((file) => /\.(js|d\.ts)$/.test(file))
  .filter((file) =>
    /from ['"]@byrd\/|import\(['"]@byrd\/|require\(['"]@byrd\//.test(
      readFileSync(join(root, 'dist', file), 'utf8'),
    ),
  );
if (leaks.length > 0) {
  console.error(`dist still imports a private @byrd/ workspace: ${leaks.join(', ')}`);
  process.exit(1);
}
