// --ref <revision>: measure a committed revision instead of the working tree, which others may be
// editing (and rebuilding) while a benchmark runs. The revision is exported with `git archive` into
// a temporary directory, given a node_modules of links to this tree's packages (its own workspaces
// linked to its own copies), and built with turbo once; later runs of the same commit reuse it.
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, fail, note, step } from './util.js';

const READY_MARKER = '.bench-snapshot-ready';
const BUILD_TIMEOUT_MS = 10 * 60_000;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Prepares (or reuses) a built snapshot of `ref`; answers { dir, commit }. */
export async function prepareSnapshot(ref: string): Promise<{ dir: string; commit: string }> {
  let commit: string;
  try {
    commit = git('rev-parse', '--verify', `${ref}^{commit}`);
  } catch {
    fail(`--ref ${ref}: not a commit of this repository.`);
  }
  const dir = join(tmpdir(), `byrd-bench-src-${commit.slice(0, 12)}`);
  if (existsSync(join(dir, READY_MARKER))) {
    note(`measuring ${ref} (${commit.slice(0, 10)}) from ${dir} (built before)`);
    return { dir, commit };
  }
  step(`Snapshot of ${ref} (${commit.slice(0, 10)}) in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await pipeline(['git', ['archive', '--format=tar', commit], { cwd: ROOT }], ['tar', ['-x', '-C', dir], {}]);
  linkNodeModules(dir);
  const code = await run(
    join(dir, 'node_modules/.bin/turbo'),
    ['run', 'build', '--output-logs=errors-only'],
    dir,
  );
  if (code !== 0) fail(`Building ${ref} failed (see above); the snapshot is left in ${dir}.`);
  writeFileSync(join(dir, READY_MARKER), `${commit}\n`);
  return { dir, commit };
}

/**
 * node_modules of the snapshot: a link to every package of this tree's node_modules, except the
 * workspace links (@byrd/*), which are relative and so copied as links to the snapshot's own copies.
 */
function linkNodeModules(dir: string): void {
  const source = join(ROOT, 'node_modules');
  if (!existsSync(source)) fail('node_modules is missing: run npm install first.');
  const target = join(dir, 'node_modules');
  mkdirSync(target);
  for (const entry of readdirSync(source)) {
    const from = join(source, entry);
    if (entry === '@byrd') {
      mkdirSync(join(target, entry));
      for (const workspace of readdirSync(from)) {
        const link = join(from, workspace);
        if (lstatSync(link).isSymbolicLink()) symlinkSync(readlinkSync(link), join(target, entry, workspace));
      }
      continue;
    }
    symlinkSync(from, join(target, entry));
  }
  // A workspace's own node_modules holds the versions it needs where the root has another (ajv 8
  // for libs/platform beside the root's ajv 6): link those too, or its build resolves the wrong one.
  for (const group of ['apps', 'libs']) {
    if (!existsSync(join(dir, group))) continue;
    for (const workspace of readdirSync(join(dir, group))) {
      const nested = join(ROOT, group, workspace, 'node_modules');
      const link = join(dir, group, workspace, 'node_modules');
      if (existsSync(nested) && existsSync(join(dir, group, workspace)) && !existsSync(link))
        symlinkSync(nested, link);
    }
  }
}

function run(command: string, args: string[], cwd: string): Promise<number> {
  return new Promise<number>((resolveRun) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    const timer = setTimeout(() => child.kill('SIGTERM'), BUILD_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun(code ?? 1);
    });
    child.on('error', () => resolveRun(1));
  });
}

/** `a | b`: resolves when both exit 0, fails otherwise. */
type Command = [string, string[], { cwd?: string }];

function pipeline([commandA, argsA, optsA]: Command, [commandB, argsB, optsB]: Command): Promise<void> {
  return new Promise<void>((resolvePipe, reject) => {
    const a = spawn(commandA, argsA, { ...optsA, stdio: ['ignore', 'pipe', 'inherit'] });
    const b = spawn(commandB, argsB, { ...optsB, stdio: ['pipe', 'ignore', 'inherit'] });
    a.stdout.pipe(b.stdin);
    let pending = 2;
    let failed = false;
    const done = (name: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`${name} exited with ${code}`));
      }
      if (--pending === 0 && !failed) resolvePipe();
    };
    a.on('close', done(commandA));
    b.on('close', done(commandB));
  });
}
