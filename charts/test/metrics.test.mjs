// Monitoring: the ServiceMonitor, the PrometheusRule and the Grafana dashboard. Off by default;
// turned on they render valid objects that scrape every service where it answers, alert on the
// metrics the services really export, and chart those metrics.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHART,
  ROOT,
  VALUE_SETS,
  lint,
  named,
  ofKind,
  renderOk,
  selects,
  validateManifest,
} from '../lib/chart.mjs';
import { exportedMetrics, metricNames, promqlProblems } from '../lib/metrics.mjs';

const MONITORING = {
  metrics: {
    serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
    prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
    dashboard: { enabled: true, annotations: { grafana_folder: 'Byrd' } },
  },
};
const PROMETHEUS_PEER = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
const DASHBOARD_FILE = join(CHART, 'files/grafana-dashboard.json');

/** The path the platform's metrics controller answers on (libs/platform/src/metrics). */
function metricsPath() {
  const source = readFileSync(join(ROOT, 'libs/platform/src/metrics/metrics.controller.ts'), 'utf8');
  const [, path] = /@Controller\('([^']+)'\)/.exec(source);
  return `/${path}`;
}

const dashboardConfigMaps = (docs) =>
  ofKind(docs, 'ConfigMap').filter((c) => Object.keys(c.data ?? {}).some((key) => key.endsWith('.json')));

/** Every panel of a dashboard, those inside collapsed rows too. */
const panelsOf = (dashboard) => dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

describe('monitoring is off by default', () => {
  for (const [install, values] of Object.entries(VALUE_SETS)) {
    test(`${install} values render no ServiceMonitor, PrometheusRule or dashboard, and admit no Prometheus`, () => {
      const docs = renderOk({ values });
      assert.deepEqual(ofKind(docs, 'ServiceMonitor'), []);
      assert.deepEqual(ofKind(docs, 'PrometheusRule'), []);
      assert.deepEqual(dashboardConfigMaps(docs), []);
      for (const policy of ofKind(docs, 'NetworkPolicy')) {
        const peers = (policy.spec.ingress ?? []).flatMap((rule) => rule.from);
        assert.ok(!peers.some((peer) => JSON.stringify(peer) === JSON.stringify(PROMETHEUS_PEER)), policy.metadata.name);
      }
    });
  }
});

for (const [install, values] of Object.entries(VALUE_SETS)) {
  describe(`monitoring on, with ${install} values`, () => {
    let docs;
    before(() => {
      docs = renderOk({ values: [...values, MONITORING] });
    });

    test('helm lint --strict finds nothing, and every object is valid (kubernetes-models)', async () => {
      const result = lint({ values: [...values, MONITORING] });
      assert.equal(result.status, 0, result.stdout + result.stderr);
      assert.doesNotMatch(result.stdout, /\[(WARNING|ERROR)\]/);
      for (const doc of [...ofKind(docs, 'ServiceMonitor'), ...ofKind(docs, 'PrometheusRule'), ...dashboardConfigMaps(docs)]) {
        await validateManifest(doc);
      }
    });

    test("the ServiceMonitor scrapes every service's /metrics on its HTTP port, and only the release's Services", () => {
      const [monitor] = ofKind(docs, 'ServiceMonitor');
      assert.ok(monitor, 'a ServiceMonitor');
      assert.equal(monitor.metadata.labels.release, 'kube-prometheus-stack', 'the labels Prometheus selects by');
      assert.deepEqual(monitor.spec.namespaceSelector.matchNames, ['byrd']);
      const services = ofKind(docs, 'Service');
      const selected = services.filter((s) => selects(monitor.spec.selector.matchLabels, s.metadata.labels));
      assert.deepEqual(
        selected.map((s) => s.metadata.name).sort(),
        ofKind(docs, 'Deployment').map((d) => d.metadata.name).sort(),
        'one scraped Service per deployed service',
      );
      assert.ok(!selects(monitor.spec.selector.matchLabels, { ...services[0].metadata.labels, 'app.kubernetes.io/instance': 'other' }));
      const [endpoint] = monitor.spec.endpoints;
      assert.equal(monitor.spec.endpoints.length, 1);
      assert.equal(endpoint.path, metricsPath());
      assert.equal(endpoint.interval, '30s');
      assert.equal(endpoint.scrapeTimeout, '10s');
      for (const service of selected) {
        // The named port reaches the container port the service listens on.
        const port = service.spec.ports.find((p) => p.name === endpoint.port);
        assert.ok(port, `${service.metadata.name} has the port ${endpoint.port}`);
        const deployment = named(docs, 'Deployment', service.metadata.name);
        const [container] = deployment.spec.template.spec.containers;
        const containerPort = container.ports.find((p) => p.name === port.targetPort);
        assert.ok(containerPort, `${service.metadata.name}: targetPort ${port.targetPort} is a container port`);
        const config = named(docs, 'ConfigMap', deployment.metadata.name);
        assert.equal(String(containerPort.containerPort), config.data.HTTP_PORT, `${service.metadata.name}: the port it listens on`);
      }
    });

    test("every service's NetworkPolicy lets Prometheus reach its HTTP port", () => {
      for (const deployment of ofKind(docs, 'Deployment')) {
        const policy = named(docs, 'NetworkPolicy', deployment.metadata.name);
        if (!policy) continue; // networkPolicy.enabled false for that service
        const admitted = policy.spec.ingress.filter((rule) =>
          rule.from.some((peer) => JSON.stringify(peer) === JSON.stringify(PROMETHEUS_PEER)),
        );
        assert.equal(admitted.length, 1, `${deployment.metadata.name}: Prometheus admitted`);
        assert.deepEqual(admitted[0].ports, [{ port: 'http', protocol: 'TCP' }]);
      }
    });

    test('every alert has a severity, a summary, a description and a for:, and names exported metrics and labels', () => {
      const [rule] = ofKind(docs, 'PrometheusRule');
      assert.equal(rule.metadata.labels.release, 'kube-prometheus-stack');
      const rules = rule.spec.groups.flatMap((g) => g.rules);
      assert.ok(rules.length >= 10, `${rules.length} alerts`);
      for (const r of rules) {
        assert.match(r.alert, /^Byrd[A-Z][A-Za-z]+$/);
        assert.ok(['warning', 'critical'].includes(r.labels?.severity), `${r.alert}: severity`);
        assert.ok(r.annotations?.summary && r.annotations.description, `${r.alert}: summary and description`);
        assert.match(r.for, /^[1-9][0-9]*m$/, `${r.alert}: for`);
        assert.deepEqual(promqlProblems(r.expr), [], `${r.alert}: ${r.expr}`);
        // Prometheus' own template syntax survives Helm's.
        assert.match(r.annotations.summary, /\{\{ \$(labels\.\w+|value)/, `${r.alert}: summary names what fires`);
      }
    });

    test("alerts watch this release's services only: its namespace and its Services' jobs", () => {
      const rules = ofKind(docs, 'PrometheusRule')[0].spec.groups.flatMap((g) => g.rules);
      const jobs = ofKind(docs, 'Service').map((s) => s.metadata.name);
      for (const r of rules) {
        assert.match(r.expr, /namespace="byrd"/, r.alert);
        for (const [, pattern] of r.expr.matchAll(/job=~"([^"]+)"/g)) {
          assert.deepEqual(pattern.split('|').sort(), jobs.sort(), `${r.alert}: the jobs of the release's Services`);
        }
      }
    });

    test('memory alerts compare each pod with its own memory limit', () => {
      const rules = ofKind(docs, 'PrometheusRule')[0].spec.groups.flatMap((g) => g.rules);
      const memory = rules.filter((r) => r.alert === 'ByrdMemoryNearLimit');
      const limited = ofKind(docs, 'Deployment').filter((d) => d.spec.template.spec.containers[0].resources?.limits?.memory);
      assert.equal(memory.length, limited.length);
      const bytes = { Mi: 2 ** 20, Gi: 2 ** 30 };
      for (const d of limited) {
        const limit = d.spec.template.spec.containers[0].resources.limits.memory;
        const [, amount, unit] = /^([0-9.]+)(Mi|Gi)$/.exec(limit);
        const r = memory.find((m) => m.expr.includes(`job="${d.metadata.name}"`));
        assert.ok(r, `${d.metadata.name}: a memory alert`);
        assert.match(r.expr, new RegExp(`> 0\\.9 \\* ${Number(amount) * bytes[unit]}$`), `${d.metadata.name}: 90 % of ${limit}`);
      }
    });

    test('the dashboard ConfigMap carries the Grafana sidecar label and the dashboard file', () => {
      const [configMap] = dashboardConfigMaps(docs);
      assert.ok(configMap, 'a dashboard ConfigMap');
      assert.equal(configMap.metadata.labels.grafana_dashboard, '1');
      assert.equal(configMap.metadata.annotations.grafana_folder, 'Byrd');
      const [json] = Object.values(configMap.data);
      assert.deepEqual(JSON.parse(json), JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')));
    });
  });
}

describe('the alerts', () => {
  const rulesWith = (values) =>
    ofKind(renderOk({ values: [MONITORING, values] }), 'PrometheusRule')[0].spec.groups.flatMap((g) => g.rules);

  test('cover the signs of trouble of docs/operations.md', () => {
    const alerts = new Set(rulesWith({}).map((r) => r.alert));
    for (const alert of [
      'ByrdTargetDown',
      'ByrdOutboxEventsStuck',
      'ByrdOutboxBacklogGrowing',
      'ByrdConsumerLagging',
      'ByrdEventsDeadLettered',
      'ByrdDatabasePoolExhausted',
      'ByrdHighServerErrorRate',
      'ByrdWebhookFailureRateHigh',
      'ByrdWebhookQueueBacklog',
      'ByrdAcquirerFailing',
      'ByrdRpcUnanswered',
      'ByrdMemoryNearLimit',
    ]) {
      assert.ok(alerts.has(alert), alert);
    }
  });

  test('follow the thresholds of the values', () => {
    const thresholds = {
      outboxOldestEventAgeSeconds: 120,
      outboxBacklogEvents: 5000,
      consumerPendingEvents: 250,
      serverErrorRatio: 0.02,
      webhookFailureRatio: 0.8,
      webhookDueQueueDepth: 20000,
      acquirerFailureRatio: 0.3,
      rpcUnansweredRatio: 0.15,
      memoryLimitRatio: 0.75,
    };
    const rules = rulesWith({ metrics: { prometheusRule: { thresholds } } });
    const expr = (alert) => rules.find((r) => r.alert === alert).expr;
    assert.match(expr('ByrdOutboxEventsStuck'), /\) > 120$/);
    assert.match(expr('ByrdOutboxBacklogGrowing'), /\) > 5000\s/);
    assert.match(expr('ByrdConsumerLagging'), /\) > 250$/);
    assert.match(expr('ByrdHighServerErrorRate'), /> 0\.02$/);
    assert.match(expr('ByrdWebhookFailureRateHigh'), /> 0\.8$/);
    assert.match(expr('ByrdWebhookQueueBacklog'), /\) > 20000$/);
    assert.match(expr('ByrdAcquirerFailing'), /> 0\.3$/);
    assert.match(expr('ByrdRpcUnanswered'), /> 0\.15$/);
    assert.match(expr('ByrdMemoryNearLimit'), /> 0\.75 \* [0-9]+$/);
  });

  test('leave out a disabled service, and a service without a memory limit gets no memory alert', () => {
    const rules = rulesWith({
      services: { payments: { enabled: false }, orders: { resources: { limits: { memory: null } } } },
    });
    assert.ok(rules.every((r) => !r.expr.includes('byrd-payments')));
    const memoryJobs = rules.filter((r) => r.alert === 'ByrdMemoryNearLimit').map((r) => /job="([^"]+)"/.exec(r.expr)[1]);
    assert.ok(memoryJobs.length > 0);
    assert.ok(!memoryJobs.includes('byrd-orders'), 'orders has no limit');
  });

  test('extraRules join the group', () => {
    const extra = { alert: 'MyAlert', expr: 'vector(1)', for: '1m', labels: { severity: 'info' } };
    const rules = rulesWith({ metrics: { prometheusRule: { extraRules: [extra] } } });
    assert.deepEqual(rules.at(-1), extra);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
  const panels = panelsOf(dashboard).filter((p) => p.type !== 'row');
  const queries = panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));

  test('every panel query parses and names metrics and labels the services export', () => {
    assert.ok(queries.length > 0);
    for (const { panel, expr } of queries) assert.deepEqual(promqlProblems(expr), [], `${panel}: ${expr}`);
  });

  test('its variables ask for real metrics and labels', () => {
    const variables = dashboard.templating.list.filter((v) => v.type === 'query');
    assert.deepEqual(variables.map((v) => v.name).sort(), ['job', 'namespace']);
    for (const variable of variables) {
      const [, selector, label] = /^label_values\((.+),\s*(\w+)\)$/.exec(variable.query.query);
      assert.deepEqual(promqlProblems(selector), [], variable.name);
      const [metric] = metricNames(selector);
      assert.ok(exportedMetrics().get(metric).has(label), `${metric} has the label ${label}`);
    }
  });

  test('charts HTTP, events, webhooks, the acquirer, 3DS, the vault and memory', () => {
    const charted = new Set(queries.flatMap(({ expr }) => metricNames(expr)));
    for (const metric of [
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'outbox_backlog_events',
      'outbox_oldest_event_age_seconds',
      'events_consumer_pending',
      'events_consumed_total',
      'webhook_deliveries_total',
      'webhook_attempts_total',
      'webhook_delivery_latency_seconds_bucket',
      'webhook_endpoint_circuits_open',
      'acquirer_request_duration_seconds_bucket',
      'acquirer_request_duration_seconds_count',
      'three_ds_authentications_total',
      'vault_operation_duration_seconds_count',
      'vault_operation_duration_seconds_bucket',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(charted.has(metric), `a panel charts ${metric}`);
    }
  });

  test('panels have unique ids, use the data source variable, and do not overlap', () => {
    const all = panelsOf(dashboard);
    assert.equal(new Set(all.map((p) => p.id)).size, all.length, 'unique ids');
    for (const p of panels) assert.equal(p.datasource?.uid, '${datasource}', p.title);
    const cells = new Map();
    for (const p of dashboard.panels) {
      const { x, y, w, h } = p.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: within the 24 columns`);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const key = `${row}:${column}`;
          assert.ok(!cells.has(key), `${p.title} overlaps ${cells.get(key)}`);
          cells.set(key, p.title);
        }
      }
    }
  });
});

describe('the metrics check itself', () => {
  test('catches a misspelt metric, a label the metric lacks (matched or grouped by), and a syntax error', () => {
    assert.deepEqual(promqlProblems('sum(rate(webhook_attempts_total{result="failure"}[5m]))'), []);
    assert.deepEqual(promqlProblems('rate(webhook_attempt_total[5m])'), ['no service exports the metric webhook_attempt_total']);
    assert.deepEqual(promqlProblems('rate(webhook_attempts_total{outcome="failure"}[5m])'), [
      'webhook_attempts_total has no label outcome',
    ]);
    assert.deepEqual(promqlProblems('sum by (kind, outcome) (rate(webhook_attempts_total[5m]))'), [
      'webhook_attempts_total has no label outcome',
    ]);
    assert.match(promqlProblems('sum(rate(webhook_attempts_total[5m])) by')[0], /^syntax error/);
  });

  test("finds the platform's, the services' and Node's metrics, histograms as their series", () => {
    const metrics = exportedMetrics();
    for (const name of [
      'outbox_backlog_events',
      'webhook_due_queue_depth',
      'http_request_duration_seconds_bucket',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(metrics.has(name), name);
    }
    assert.ok(!metrics.has('http_request_duration_seconds'), 'a histogram exports _bucket, _sum and _count');
    assert.ok(metrics.get('http_request_duration_seconds_bucket').has('le'));
    assert.ok(metrics.get('events_consumer_pending').has('consumer'));
  });
});

test('each object may go to another namespace (where Prometheus or Grafana looks); the scrapes stay on the release', () => {
  const docs = renderOk({
    values: [
      MONITORING,
      {
        metrics: {
          serviceMonitor: { namespace: 'monitoring' },
          prometheusRule: { namespace: 'monitoring' },
          dashboard: { namespace: 'grafana' },
        },
      },
    ],
  });
  const [monitor] = ofKind(docs, 'ServiceMonitor');
  assert.equal(monitor.metadata.namespace, 'monitoring');
  assert.deepEqual(monitor.spec.namespaceSelector.matchNames, ['byrd']);
  const [rule] = ofKind(docs, 'PrometheusRule');
  assert.equal(rule.metadata.namespace, 'monitoring');
  assert.match(rule.spec.groups[0].rules[0].expr, /namespace="byrd"/);
  assert.equal(dashboardConfigMaps(docs)[0].metadata.namespace, 'grafana');
});

test('with scrapeFrom empty, NetworkPolicies admit no one more (Prometheus is admitted some other way)', () => {
  const without = renderOk({ values: [MONITORING, { metrics: { serviceMonitor: { scrapeFrom: [] } } }] });
  const off = renderOk();
  for (const policy of ofKind(off, 'NetworkPolicy')) {
    assert.deepEqual(named(without, 'NetworkPolicy', policy.metadata.name).spec, policy.spec, policy.metadata.name);
  }
});
