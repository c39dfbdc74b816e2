// docker/Dockerfile, without a Docker engine: dockerfile-utils' linter, the rules that matter for
// these images (multi-stage, pinned base, non-root, production dependencies only, npm install
// never npm ci, node as PID 1), the build context, and `turbo prune` of every app as the image
// build runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { ROOT, component, ofKind, renderOk } from '../lib/chart.mjs';
import { parse } from 'yaml';

const DOCKERFILE = join(ROOT, 'docker/Dockerfile');
const text = readFileSync(DOCKERFILE, 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();
const argsOf = (i) => i.getArgumentsContent() ?? '';

/** Instructions grouped by stage: [{ from, name, instructions }]. */
const stages = [];
for (const instruction of instructions) {
  if (instruction.getKeyword() === 'FROM') {
    stages.push({ from: instruction, name: instruction.getBuildStage(), instructions: [] });
  } else if (stages.length > 0) {
    stages.at(-1).instructions.push(instruction);
  }
}
const runtime = stages.at(-1);
const globalArgs = Object.fromEntries(
  dockerfile
    .getInitialARGs()
    .map((i) => i.getProperty())
    .map((p) => [p.getName(), p.getValue()]),
);
const resolveImage = (image) => image.replace(/^\$\{?(\w+)\}?$/, (_, name) => globalArgs[name] ?? image);

test('dockerfile-utils finds no problem', () => {
  const problems = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  assert.deepEqual(problems, []);
});

test('multi-stage: prune, install and build stages, and a separate runtime stage', () => {
  assert.ok(stages.length >= 3, 'several stages');
  assert.equal(runtime.name, 'runtime');
  const runs = instructions.filter((i) => i.getKeyword() === 'RUN').map(argsOf).join('\n');
  assert.match(runs, /turbo@\$\{TURBO_VERSION\}" prune "@byrd\/\$\{APP\}" --docker/);
  assert.match(runs, /npx turbo run build --filter="@byrd\/\$\{APP\}"/);
  // Copies into the runtime stage come from other stages or docker/ only: no sources, no toolchain.
  for (const copy of runtime.instructions.filter((i) => i.getKeyword() === 'COPY')) {
    const from = copy.getFromFlag()?.getValue();
    const sources = argsOf(copy);
    assert.ok(from || sources.startsWith('docker/'), `runtime COPY ${argsOf(copy)}`);
  }
});

test('every base image is pinned: an exact Node 20 version and a sha256 digest', () => {
  for (const { from } of stages) {
    const image = resolveImage(from.getImage());
    if (stages.some((s) => s.name === image)) continue; // a previous stage
    assert.match(image, /^node:20\.\d+\.\d+-[a-z]+-slim@sha256:[0-9a-f]{64}$/, `FROM ${from.getImage()} (${image})`);
  }
});

test('packages come from the pruned lockfile with npm install, never npm ci; the runtime has production ones only', () => {
  const runs = instructions.filter((i) => i.getKeyword() === 'RUN').map(argsOf);
  assert.ok(runs.every((r) => !/\bnpm\s+ci\b/.test(r)), 'no npm ci (DESIGN.md: the lockfile lacks non-Linux optional packages)');
  const deps = stages.find((s) => s.name === 'deps');
  assert.ok(deps.instructions.some((i) => i.getKeyword() === 'RUN' && /npm install --omit=dev/.test(argsOf(i))));
  const fromStages = runtime.instructions
    .filter((i) => i.getKeyword() === 'COPY' && i.getFromFlag())
    .map((i) => i.getFromFlag().getValue());
  assert.deepEqual(fromStages.sort(), ['build', 'deps']);
  const fromBuild = runtime.instructions.find((i) => i.getKeyword() === 'COPY' && i.getFromFlag()?.getValue() === 'build');
  assert.match(argsOf(fromBuild), /^\/out\/ /, 'only package.json and dist/ of the build');
  assert.ok(runtime.instructions.some((i) => i.getKeyword() === 'ENV' && /NODE_ENV=production/.test(argsOf(i))));
});

test('the runtime runs as a numeric non-root user, node as PID 1 (exec form), no shell entrypoint', () => {
  const users = runtime.instructions.filter((i) => i.getKeyword() === 'USER');
  assert.ok(users.length > 0, 'the runtime stage sets USER');
  const user = argsOf(users.at(-1));
  assert.match(user, /^[1-9]\d*(:[1-9]\d*)?$/, `USER ${user}: numeric (Kubernetes checks runAsNonRoot), not root`);
  const lastRun = runtime.instructions.findLastIndex((i) => i.getKeyword() === 'RUN');
  assert.ok(runtime.instructions.indexOf(users.at(-1)) > lastRun, 'USER comes after the last RUN');
  const cmd = runtime.instructions.filter((i) => i.getKeyword() === 'CMD');
  assert.equal(cmd.length, 1);
  assert.deepEqual(JSON.parse(argsOf(cmd[0])), ['node', 'dist/main.js'], 'exec form: node is PID 1 and gets SIGTERM');
  assert.equal(instructions.filter((i) => i.getKeyword() === 'ENTRYPOINT').length, 0);
  assert.ok(!instructions.some((i) => i.getKeyword() === 'ADD'), 'COPY, never ADD');
  const workdir = runtime.instructions.filter((i) => i.getKeyword() === 'WORKDIR').map(argsOf).at(-1);
  assert.equal(workdir, '/app/apps/${APP}', 'dist/main.js and dist/migrate.js resolve from the app folder');
});

test('the image runs the services with the Node flags and malloc arenas npm start and the benchmarks use', async () => {
  const { SERVICE_NODE_OPTIONS, SERVICE_MALLOC_ARENA_MAX } = await import(join(ROOT, 'deploy/node-options.mjs'));
  const env = Object.fromEntries(
    runtime.instructions
      .filter((i) => i.getKeyword() === 'ENV')
      .flatMap((i) => i.getProperties())
      .map((p) => [p.getName(), p.getValue()]),
  );
  assert.equal(env.NODE_OPTIONS, SERVICE_NODE_OPTIONS, 'docker/Dockerfile and deploy/node-options.mjs agree');
  assert.equal(env.MALLOC_ARENA_MAX, SERVICE_MALLOC_ARENA_MAX, 'and on malloc arenas');
  const values = parse(readFileSync(join(ROOT, 'charts/byrd/values.yaml'), 'utf8'));
  assert.equal(values.nodeOptions, SERVICE_NODE_OPTIONS, 'the chart (which adds the heap limit) agrees too');
});

test('the chart runs what the image holds: migrations and the CLI for the hook Jobs', () => {
  const cliCopy = runtime.instructions.find((i) => i.getKeyword() === 'COPY' && argsOf(i).startsWith('docker/cli.mjs'));
  assert.equal(argsOf(cliCopy), 'docker/cli.mjs ./cli.mjs', 'the CLI lands at /app/cli.mjs (WORKDIR /app)');
  assert.match(readFileSync(join(ROOT, 'docker/cli.mjs'), 'utf8'), /from '\.\/libs\/platform\/dist\/cli\/main\.js'/);
  assert.match(readFileSync(join(ROOT, 'libs/platform/src/cli/main.ts'), 'utf8'), /export async function runCli\(/);
  const jobs = ofKind(renderOk(), 'Job');
  const provision = jobs.find((j) => component(j) === 'nats-provision').spec.template.spec.containers[0];
  assert.deepEqual(provision.command, ['node', '/app/cli.mjs', 'nats', 'provision']);
  for (const job of jobs.filter((j) => component(j).endsWith('-migrations'))) {
    const app = component(job).replace(/-migrations$/, '');
    assert.deepEqual(job.spec.template.spec.containers[0].command, ['node', 'dist/migrate.js']);
    assert.ok(existsSync(join(ROOT, 'apps', app, 'src/migrate.ts')), `apps/${app}/src/migrate.ts builds dist/migrate.js`);
  }
});

test('the build context keeps out local and built files but keeps what the build reads', () => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const pattern of ['.git', '**/node_modules', '**/dist', '.local', 'charts/.cache']) {
    assert.ok(ignored.includes(pattern), `.dockerignore lists ${pattern}`);
  }
  for (const needed of ['package-lock.json', 'tsconfig.base.json', 'docker', 'apps', 'libs', 'package.json']) {
    assert.ok(!ignored.includes(needed), `.dockerignore must keep ${needed}`);
  }
});

test('turbo prune --docker of every app gives the build what the Dockerfile expects', () => {
  const apps = readdirSync(join(ROOT, 'apps')).filter((a) => existsSync(join(ROOT, 'apps', a, 'package.json')));
  assert.ok(apps.includes('orders'));
  const turbo = join(ROOT, 'node_modules/.bin/turbo');
  for (const app of apps) {
    const out = mkdtempSync(join(tmpdir(), `byrd-prune-${app}-`));
    try {
      const result = spawnSync(turbo, ['prune', `@byrd/${app}`, '--docker', '--out-dir', out], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(result.status, 0, `turbo prune @byrd/${app}: ${result.stderr}`);
      const root = JSON.parse(readFileSync(join(out, 'json/package.json'), 'utf8'));
      assert.match(root.packageManager, /^npm@\d+\.\d+\.\d+$/, 'the npm stage reads packageManager');
      assert.ok(existsSync(join(out, 'json/package-lock.json')), 'the pruned lockfile');
      assert.ok(root.workspaces.includes(`apps/${app}`));
      for (const dir of root.workspaces) {
        const pkg = JSON.parse(readFileSync(join(out, 'json', dir, 'package.json'), 'utf8'));
        assert.ok(pkg.scripts?.build, `${dir} has a build script (the runtime copies its dist/)`);
      }
      assert.ok(existsSync(join(out, 'full/apps', app, 'src/main.ts')), `apps/${app}/src/main.ts`);
      assert.ok(!existsSync(join(out, 'full/tsconfig.base.json')), 'prune leaves tsconfig.base.json out: the Dockerfile copies it');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  assert.match(text, /COPY tsconfig\.base\.json \.\//);
});
