// Shared by the chart checks in test/: helm runs, rendered manifests, the route table.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { helmPath } from '../scripts/helm.mjs';

export const CHARTS = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = resolve(CHARTS, '..');
export const CHART = join(CHARTS, 'byrd');
export const ROUTES_FILE = join(ROOT, 'deploy/routes.json');
export const EXAMPLE_VALUES = {
  sandbox: join(ROOT, 'deploy/values/sandbox.yaml'),
  production: join(ROOT, 'deploy/values/production.yaml'),
};
/** The installs every check runs over: the chart's defaults and each example. */
export const VALUE_SETS = { default: [], ...Object.fromEntries(Object.entries(EXAMPLE_VALUES).map(([k, v]) => [k, [v]])) };

const scratch = mkdtempSync(join(tmpdir(), 'byrd-chart-checks-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
let scratchFiles = 0;

export function helm(args) {
  const result = spawnSync(helmPath(), args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A values file for an object (helm reads values from files). */
function valuesFile(values) {
  if (typeof values === 'string') return values;
  const file = join(scratch, `values-${++scratchFiles}.yaml`);
  writeFileSync(file, stringify(values));
  return file;
}

/**
 * `helm template` of the chart. values: files or objects, applied in order.
 * Returns { status, stdout, stderr, docs } (docs: the parsed manifests when it rendered).
 */
export function render({ chart = CHART, values = [], release = 'byrd', namespace = 'byrd' } = {}) {
  const args = ['template', release, chart, '--namespace', namespace];
  for (const v of values) args.push('--values', valuesFile(v));
  const result = helm(args);
  return { ...result, docs: result.status === 0 ? parseManifests(result.stdout) : [] };
}

/**
 * `helm template --dry-run=server` against a stand-in Kubernetes API that holds `live` objects (as a
 * cluster does during `helm upgrade`), so the chart's `lookup` finds them. Returns the manifests.
 */
export async function renderAgainstCluster({ live = [], values = [], release = 'byrd', namespace = 'byrd' } = {}) {
  const api = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const path = new URL(req.url, 'http://api').pathname;
    const found = live.find(
      (o) =>
        path ===
        `/apis/${o.apiVersion}/namespaces/${o.metadata.namespace ?? namespace}/${o.kind.toLowerCase()}s/${o.metadata.name}`,
    );
    if (found) return res.end(JSON.stringify(found));
    // Discovery: the groups of the live objects (`lookup` asks for them first).
    const resources = live.filter((o) => path === `/apis/${o.apiVersion}`);
    if (resources.length > 0) {
      const [{ apiVersion }] = resources;
      return res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: apiVersion,
          resources: [...new Set(resources.map((o) => o.kind))].map((kind) => ({
            name: `${kind.toLowerCase()}s`,
            singularName: kind.toLowerCase(),
            namespaced: true,
            kind,
            verbs: ['get'],
          })),
        }),
      );
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
  });
  await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve));
  try {
    const kubeconfig = join(scratch, `kubeconfig-${++scratchFiles}`);
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'stand-in', cluster: { server: `http://127.0.0.1:${api.address().port}` } }],
        users: [{ name: 'stand-in', user: {} }],
        contexts: [{ name: 'stand-in', context: { cluster: 'stand-in', user: 'stand-in' } }],
        'current-context': 'stand-in',
      }),
    );
    const args = ['template', release, CHART, '--namespace', namespace, '--dry-run=server', '--kubeconfig', kubeconfig];
    for (const v of values) args.push('--values', valuesFile(v));
    // Not spawnSync: the stand-in API answers from this process while helm runs.
    const child = spawn(helmPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const status = await new Promise((resolve) => child.on('close', resolve));
    if (status !== 0) throw new Error(`helm template --dry-run=server failed:\n${stderr}`);
    return parseManifests(stdout);
  } finally {
    await new Promise((resolve) => api.close(resolve));
  }
}

/** `helm template` that must succeed; returns the manifests. */
export function renderOk(options) {
  const result = render(options);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return result.docs;
}

export function lint({ chart = CHART, values = [] } = {}) {
  const args = ['lint', '--strict', chart];
  for (const v of values) args.push('--values', valuesFile(v));
  return helm(args);
}

export function parseManifests(text) {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML is invalid: ${doc.errors[0].message}`);
      return doc.toJS();
    })
    .filter((doc) => doc !== null && doc !== undefined);
}

/** A copy of the chart in a scratch folder, e.g. to give it another route table. */
export function chartCopy({ routes, chartYaml } = {}) {
  const dir = join(scratch, `chart-${++scratchFiles}`, 'byrd');
  cpSync(CHART, dir, { recursive: true });
  if (routes) writeFileSync(join(dir, 'files/routes.json'), JSON.stringify(routes, null, 2));
  if (chartYaml) writeFileSync(join(dir, 'Chart.yaml'), chartYaml(readFileSync(join(dir, 'Chart.yaml'), 'utf8')));
  return dir;
}

export const routeTable = () => JSON.parse(readFileSync(ROUTES_FILE, 'utf8'));

/**
 * The longest work each service may have in flight when SIGTERM comes, read from the services'
 * own source (their defaults): its shutdownGraceMs must outlast it, or the pod exits with it cut
 * off. env: the variable that changes it (none: fixed in the code).
 */
export function inFlightLimits() {
  const limit = (file, pattern) => {
    const match = pattern.exec(readFileSync(join(ROOT, file), 'utf8'));
    if (!match) throw new Error(`${file}: ${pattern} matches nothing (was the limit renamed?)`);
    return Number(match[1].replaceAll('_', ''));
  };
  return {
    // How long a payment waits for the acquirer.
    payments: {
      env: 'ACQUIRER_TIMEOUT_MS',
      ms: limit('apps/payments/src/config.ts', /ACQUIRER_TIMEOUT_MS:[^\n]*\.default\(([\d_]+)\)/),
    },
    // How long the hosted form waits for rpc.payments.create.
    'hosted-form-bff': {
      env: null,
      ms: limit('apps/hosted-form-bff/src/payments/pay-order.usecase.ts', /PAYMENT_RPC_TIMEOUT_MS = ([\d_]+);/),
    },
    // How long one webhook delivery may take.
    'webhook-service': {
      env: 'WEBHOOK_TIMEOUT_MS',
      ms: limit('apps/webhook-service/src/config.ts', /WEBHOOK_TIMEOUT_MS:[^\n]*\.default\(([\d_]+)\)/),
    },
  };
}

export const chartValues = () => parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
export const readValues = (file) => parse(readFileSync(file, 'utf8')) ?? {};

/** ingress.hosts of an install: the chart's defaults overlaid by the values files. */
export function ingressHosts(valueFiles) {
  const hosts = { ...chartValues().ingress.hosts };
  for (const file of valueFiles) Object.assign(hosts, readValues(file).ingress?.hosts ?? {});
  return hosts;
}

export const ofKind = (docs, kind) => docs.filter((d) => d.kind === kind);
export const named = (docs, kind, name) => docs.find((d) => d.kind === kind && d.metadata.name === name);
export const component = (doc) => doc.metadata.labels?.['app.kubernetes.io/component'];
export const hookOf = (doc) => doc.metadata.annotations?.['helm.sh/hook'];

/** Does a label selector (matchLabels) select these labels? */
export const selects = (selector, labels) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);

const models = new Map();
/** Packages with the models of API groups that kubernetes-models itself does not hold. */
const MODEL_PACKAGES = { 'monitoring.coreos.com': '@kubernetes-models/prometheus-operator' };
/**
 * Validates a manifest with kubernetes-models (types, required fields, enums, formats), the
 * Prometheus Operator's kinds with @kubernetes-models/prometheus-operator.
 */
export async function validateManifest(doc) {
  const group = doc.apiVersion.includes('/') ? doc.apiVersion.split('/')[0] : '';
  const modulePath = `${MODEL_PACKAGES[group] ?? 'kubernetes-models'}/${doc.apiVersion}`;
  if (!models.has(modulePath)) models.set(modulePath, await import(modulePath));
  const Model = models.get(modulePath)[doc.kind];
  if (!Model) throw new Error(`kubernetes-models knows no ${doc.apiVersion} ${doc.kind}`);
  new Model(doc).validate();
}
