// One route table (deploy/routes.json) for the local edge and the Ingress: the chart's copy is the
// same file, and every public path reaches the service the table names, on its port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHART,
  ROUTES_FILE,
  VALUE_SETS,
  chartCopy,
  component,
  ingressHosts,
  named,
  ofKind,
  renderOk,
  routeTable,
  selects,
} from '../lib/chart.mjs';

test('the chart routes by the same table as the local edge (files/routes.json = deploy/routes.json)', () => {
  assert.equal(
    readFileSync(join(CHART, 'files/routes.json'), 'utf8'),
    readFileSync(ROUTES_FILE, 'utf8'),
    'charts/byrd/files/routes.json differs from deploy/routes.json: run `npm run sync-routes -w @byrd/charts`',
  );
});

/**
 * Follows a request for `path` on `host` through the rendered objects, as the ingress controller
 * and kube-proxy would: Ingress rule (longest matching Prefix, whole segments) -> Service port ->
 * the pods it selects -> the container port. Returns { service, deployment, containerPort }.
 */
function follow(docs, host, path) {
  const candidates = ofKind(docs, 'Ingress')
    .flatMap((ingress) => ingress.spec.rules)
    .filter((rule) => rule.host === host)
    .flatMap((rule) => rule.http.paths)
    .filter((p) => p.pathType === 'Prefix' && (path === p.path || path.startsWith(`${p.path}/`)))
    .sort((a, b) => b.path.length - a.path.length);
  if (candidates.length === 0) return null;
  const { backend } = candidates[0];
  const service = named(docs, 'Service', backend.service.name);
  assert.ok(service, `the Ingress names Service ${backend.service.name}, which is not rendered`);
  const servicePort = service.spec.ports.find((p) =>
    backend.service.port.name ? p.name === backend.service.port.name : p.port === backend.service.port.number,
  );
  assert.ok(servicePort, `Service ${service.metadata.name} has no port ${JSON.stringify(backend.service.port)}`);
  const deployments = ofKind(docs, 'Deployment').filter((d) =>
    selects(service.spec.selector, d.spec.template.metadata.labels),
  );
  assert.equal(deployments.length, 1, `Service ${service.metadata.name} selects exactly one Deployment`);
  const [deployment] = deployments;
  const containerPort = deployment.spec.template.spec.containers
    .flatMap((c) => c.ports ?? [])
    .find((p) => (typeof servicePort.targetPort === 'string' ? p.name === servicePort.targetPort : p.containerPort === servicePort.targetPort));
  assert.ok(containerPort, `targetPort ${servicePort.targetPort} of ${service.metadata.name} is no container port`);
  return { service: service.metadata.name, deployment: component(deployment), containerPort: containerPort.containerPort };
}

for (const [install, values] of Object.entries(VALUE_SETS)) {
  test(`${install} values: every public route reaches its service and port through the Ingress, and nothing else is routed`, () => {
    const docs = renderOk({ values });
    const table = routeTable();
    const hosts = ingressHosts(values);
    for (const route of table.routes) {
      const { port, host } = table.services[route.service];
      for (const path of [route.prefix, `${route.prefix}/some-id`]) {
        const reached = follow(docs, hosts[host], path);
        assert.ok(reached, `${hosts[host]}${path} is not routed`);
        assert.equal(reached.deployment, route.service, `${hosts[host]}${path}`);
        assert.equal(reached.containerPort, port, `${hosts[host]}${path}`);
      }
      // Another public host does not serve it.
      for (const [role, other] of Object.entries(hosts)) {
        if (role !== host) assert.equal(follow(docs, other, route.prefix), null, `${other}${route.prefix} must not be routed`);
      }
    }
    const routed = ofKind(docs, 'Ingress').flatMap((i) => i.spec.rules.flatMap((r) => r.http.paths.map((p) => p.path)));
    assert.deepEqual(routed.sort(), table.routes.map((r) => r.prefix).sort(), 'the Ingress routes exactly the table');
    const [ingress] = ofKind(docs, 'Ingress');
    const usedHosts = ingress.spec.rules.map((r) => r.host).sort();
    if (ingress.spec.tls) assert.deepEqual(ingress.spec.tls.flatMap((t) => t.hosts).sort(), usedHosts, 'TLS covers every host');
  });
}

test('a new service is one values entry plus its routes: five services on the three public hosts', () => {
  const table = {
    services: {
      orders: { port: 3001, host: 'gateway' },
      payments: { port: 3002, host: 'gateway' },
      'gateway-tokens': { port: 3003, host: 'gateway' },
      'webhook-service': { port: 3004, host: 'webhooks' },
      'hosted-form-bff': { port: 3005, host: 'checkout' },
    },
    routes: [
      { prefix: '/api/v2/orders', service: 'orders' },
      { prefix: '/api/v2/payment', service: 'payments' },
      { prefix: '/3ds', service: 'payments' },
      { prefix: '/api/v2/tokens', service: 'gateway-tokens' },
      { prefix: '/api/v1/settings', service: 'webhook-service' },
      { prefix: '/api/v1/webhooks', service: 'webhook-service' },
      { prefix: '/checkout', service: 'hosted-form-bff' },
    ],
  };
  const chart = chartCopy({ routes: table });
  const docs = renderOk({
    chart,
    values: [
      {
        services: {
          'gateway-tokens': {
            database: { existingSecret: 'tokens-db' },
            secretEnv: { CARD_KEK: { existingSecret: 'card-vault-kek', key: 'kek' } },
          },
          'webhook-service': {
            database: { existingSecret: 'webhooks-db' },
            secretEnv: { WEBHOOK_SIGNING_SECRET: { existingSecret: 'webhook-signing', key: 'secret' } },
          },
          'hosted-form-bff': { database: { enabled: false } },
          // This table has no docs service: its values entry goes too.
          'api-docs': null,
        },
      },
    ],
  });
  const hosts = ingressHosts([]);
  assert.deepEqual(ofKind(docs, 'Deployment').map(component).sort(), Object.keys(table.services).sort());
  for (const route of table.routes) {
    const { port, host } = table.services[route.service];
    const reached = follow(docs, hosts[host], `${route.prefix}/x`);
    assert.equal(reached?.deployment, route.service, `${hosts[host]}${route.prefix}`);
    assert.equal(reached.containerPort, port);
  }
  assert.deepEqual(
    ofKind(docs, 'Ingress')[0].spec.rules.map((r) => r.host).sort(),
    Object.values(hosts).sort(),
    'one Ingress with the gateway, webhooks and checkout hosts',
  );
  const migrations = ofKind(docs, 'Job').map(component).filter((c) => c.endsWith('-migrations'));
  assert.deepEqual(migrations.sort(), ['gateway-tokens-migrations', 'orders-migrations', 'payments-migrations', 'webhook-service-migrations']);
  const bff = ofKind(docs, 'Deployment').find((d) => component(d) === 'hosted-form-bff').spec.template.spec.containers[0];
  assert.ok(!(bff.env ?? []).some((e) => e.name === 'DATABASE_URL'), 'a service without a database gets no DATABASE_URL');
  const tokens = ofKind(docs, 'Deployment').find((d) => component(d) === 'gateway-tokens').spec.template.spec.containers[0];
  assert.deepEqual(tokens.env.find((e) => e.name === 'CARD_KEK').valueFrom.secretKeyRef, { name: 'card-vault-kek', key: 'kek' });
});
