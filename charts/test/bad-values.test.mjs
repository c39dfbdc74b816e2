// Bad values are refused before anything is installed, with a sentence naming the value
// (templates/checks.yaml for rules across values and the route table; values.schema.json for shapes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chartCopy, inFlightLimits, render, routeTable } from '../lib/chart.mjs';

/** Renders with `values` (and optionally another chart copy); must fail with every `messages` fragment. */
function refused({ values = [], chart, messages }) {
  const result = render({ chart, values });
  assert.notEqual(result.status, 0, `helm template accepted it:\n${result.stdout.slice(0, 400)}`);
  for (const message of messages) assert.ok(result.stderr.includes(message), `expected "${message}" in:\n${result.stderr}`);
  return result.stderr;
}

test('a service without its database Secret', () => {
  refused({
    values: [{ services: { orders: { database: { existingSecret: '' } } } }],
    messages: ['services.orders.database.existingSecret is empty: name the Secret that holds its PostgreSQL URL under the key "DATABASE_URL"'],
  });
});

test('a secretEnv entry without its Secret key (schema)', () => {
  refused({
    values: [{ services: { payments: { secretEnv: { ACQUIRER_API_KEY: { existingSecret: 'byrd-acquirer' } } } } }],
    messages: ['services.payments.secretEnv.ACQUIRER_API_KEY', 'key is required'],
  });
});

test('a misspelt service setting (schema)', () => {
  refused({ values: [{ services: { orders: { replica: 3 } } }], messages: ['Additional property replica is not allowed'] });
});

test('the mutable image tag "latest"', () => {
  refused({
    values: [{ image: { tag: 'latest' } }],
    messages: ['services.orders: the image tag "latest" is refused', 'services.payments: the image tag "latest" is refused'],
  });
});

test('an empty image tag (no tag, no digest, no appVersion)', () => {
  const chart = chartCopy({ chartYaml: (text) => text.replace(/^appVersion:.*$/m, '') });
  refused({ chart, messages: ['services.orders: the image tag is empty: set image.tag'] });
  // A digest is enough.
  const digest = `sha256:${'a'.repeat(64)}`;
  const result = render({ chart, values: [{ serviceDefaults: { image: { digest } } }] });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`image: ghcr.io/byrd-platform/byrd-orders@${digest}`));
});

test('a route to a service the route table does not know', () => {
  const table = routeTable();
  table.routes.push({ prefix: '/api/v2/ghosts', service: 'ghost' });
  refused({
    chart: chartCopy({ routes: table }),
    messages: ['route /api/v2/ghosts names service "ghost", which is not in the route table\'s services'],
  });
});

test('a service of the route table with no values entry', () => {
  const table = routeTable();
  table.services.ledger = { port: 3099, host: 'gateway' };
  table.routes.push({ prefix: '/api/v2/ledger', service: 'ledger' });
  refused({
    chart: chartCopy({ routes: table }),
    messages: ['the route table (deploy/routes.json) has service "ledger", but values have no services.ledger entry'],
  });
});

test('a values service missing from the route table, and an unknown public host', () => {
  const table = routeTable();
  table.services.orders = { ...table.services.orders, host: 'admin' };
  refused({
    chart: chartCopy({ routes: table }),
    values: [{ services: { ledger: { database: { existingSecret: 'ledger-db' } } } }],
    messages: [
      'services.ledger is not in the route table: add it to deploy/routes.json',
      'gives service "orders" host "admin"; it must be one of gateway, webhooks, checkout',
    ],
  });
});

test('replicas not above the PDB minAvailable (with and without autoscaling)', () => {
  refused({
    values: [{ services: { orders: { replicas: 2, pdb: { minAvailable: 3 } } } }],
    messages: ['services.orders.pdb.minAvailable (3) must be lower than its replicas (2)'],
  });
  refused({
    values: [{ services: { payments: { autoscaling: { enabled: true, minReplicas: 2 }, pdb: { minAvailable: 2 } } } }],
    messages: ['services.payments.pdb.minAvailable (2) must be lower than its replicas (2, autoscaling.minReplicas)'],
  });
  refused({
    values: [{ services: { orders: { autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 3 } } } }],
    messages: ['services.orders.autoscaling.minReplicas (5) is above maxReplicas (3)'],
  });
});

test('a termination grace period shorter than the drain', () => {
  refused({
    values: [{ serviceDefaults: { terminationGracePeriodSeconds: 10, preStopSleepSeconds: 5, shutdownGraceMs: 10000 } }],
    messages: ['services.orders.terminationGracePeriodSeconds (10) must exceed preStopSleepSeconds (5) plus shutdownGraceMs (10000 ms)'],
  });
});

test('a shutdown grace not longer than the work the service may have in flight', () => {
  const limits = inFlightLimits();
  const acquirer = limits.payments.ms;
  refused({
    values: [{ services: { payments: { shutdownGraceMs: acquirer } } }],
    messages: [
      `services.payments.shutdownGraceMs (${acquirer}) must be longer than its ACQUIRER_TIMEOUT_MS (${acquirer} ms)`,
    ],
  });
  // A longer wait set through env needs a longer grace (a string as YAML gives it, or a number).
  refused({
    values: [{ services: { payments: { env: { ACQUIRER_TIMEOUT_MS: '40000' } } } }],
    messages: ['services.payments.shutdownGraceMs (25000) must be longer than its ACQUIRER_TIMEOUT_MS (40000 ms)'],
  });
  refused({
    values: [{ services: { 'webhook-service': { env: { WEBHOOK_TIMEOUT_MS: 30000 } } } }],
    messages: ['services.webhook-service.shutdownGraceMs (25000) must be longer than its WEBHOOK_TIMEOUT_MS (30000 ms)'],
  });
  const delivery = limits['webhook-service'].ms;
  refused({
    values: [{ services: { 'webhook-service': { shutdownGraceMs: delivery } } }],
    messages: [`services.webhook-service.shutdownGraceMs (${delivery}) must be longer than its WEBHOOK_TIMEOUT_MS`],
  });
  const payment = limits['hosted-form-bff'].ms;
  refused({
    values: [{ services: { 'hosted-form-bff': { shutdownGraceMs: payment } } }],
    messages: [`services.hosted-form-bff.shutdownGraceMs (${payment}) must be longer than ${payment} ms`],
  });
  refused({
    values: [{ services: { payments: { env: { ACQUIRER_TIMEOUT_MS: '20s' } } } }],
    messages: ['services.payments.env.ACQUIRER_TIMEOUT_MS "20s" must be a whole number of milliseconds'],
  });
  // Raised together, they are accepted.
  const raised = { env: { ACQUIRER_TIMEOUT_MS: '40000' }, shutdownGraceMs: 45000, terminationGracePeriodSeconds: 55 };
  const result = render({ values: [{ services: { payments: raised } }] });
  assert.equal(result.status, 0, result.stderr);
});

test('a NATS URL that is not NATS, an empty public host, a TLS Secret missing, all named at once', () => {
  const stderr = refused({
    values: [{ nats: { url: 'http://nats:4222' }, ingress: { hosts: { gateway: '' }, tls: { secretName: '' } } }],
    messages: [
      'nats.url "http://nats:4222" must be a nats://, tls://, ws:// or wss:// URL',
      'ingress.hosts.gateway is empty, but service orders has public routes on that host',
      'ingress.tls.secretName is empty',
    ],
  });
  assert.match(stderr, /The byrd chart cannot be installed with these values:/);
});

test('NATS provisioning from a service that is not deployed', () => {
  refused({
    values: [{ nats: { provision: { imageFrom: 'payments' } }, services: { payments: { enabled: false } } }],
    messages: ['nats.provision.imageFrom "payments" must name an enabled service'],
  });
});

test('a memory limit that is not a quantity (the V8 heap limit is derived from it)', () => {
  refused({
    values: [{ services: { orders: { resources: { limits: { memory: 'lots' } } } } }],
    messages: ['resources.limits.memory "lots": use a quantity such as 512Mi, 1Gi or 600M'],
  });
});

test('a scrape timeout longer than the scrape interval', () => {
  refused({
    values: [{ metrics: { serviceMonitor: { enabled: true, interval: '15s', scrapeTimeout: '1m' } } }],
    messages: ['metrics.serviceMonitor.scrapeTimeout (1m) is longer than its interval (15s)'],
  });
});

test('a misspelt monitoring setting, and an alert ratio above 1 (schema)', () => {
  refused({ values: [{ metrics: { dashboard: { enable: true } } }], messages: ['Additional property enable is not allowed'] });
  refused({
    values: [{ metrics: { prometheusRule: { thresholds: { serverErrorRatio: 5 } } } }],
    messages: ['metrics.prometheusRule.thresholds.serverErrorRatio'],
  });
});
