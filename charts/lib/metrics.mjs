// What the services export on GET /metrics, read from their source, and a PromQL check against it:
// the chart's alerts and dashboard may only name metrics (and labels) that really exist, so renaming
// a metric in a service without updating the chart fails the chart checks.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry, collectDefaultMetrics } from 'prom-client';
import ts from 'typescript';
import { ROOT } from './chart.mjs';

/** Labels Prometheus (with the Operator's ServiceMonitor) puts on every scraped series. */
export const TARGET_LABELS = ['job', 'instance', 'namespace', 'service', 'pod', 'container', 'endpoint'];

const METRIC_CLASSES = new Set(['Counter', 'Gauge', 'Histogram', 'Summary']);

/** The series one prom-client metric exports: name -> its labels. */
function seriesOf(name, type, labelNames) {
  const labels = [...labelNames, ...TARGET_LABELS];
  switch (type) {
    case 'histogram':
      return [
        [`${name}_bucket`, [...labels, 'le']],
        [`${name}_sum`, labels],
        [`${name}_count`, labels],
      ];
    case 'summary':
      return [
        [name, [...labels, 'quantile']],
        [`${name}_sum`, labels],
        [`${name}_count`, labels],
      ];
    default:
      return [[name, labels]];
  }
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** `new Counter({ name: '...', labelNames: [...] })` and the like in one TypeScript file. */
function registrationsIn(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = [];
  let defaults = false;
  const visit = (node) => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && METRIC_CLASSES.has(node.expression.text)) {
      const [options] = node.arguments ?? [];
      if (options && ts.isObjectLiteralExpression(options)) {
        const property = (key) =>
          options.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(source) === key)?.initializer;
        const name = property('name');
        if (name && ts.isStringLiteralLike(name)) {
          const labelNames = property('labelNames');
          const array = labelNames && ts.isAsExpression(labelNames) ? labelNames.expression : labelNames;
          const labels = array && ts.isArrayLiteralExpression(array) ? array.elements.map((e) => e.text) : [];
          found.push({ name: name.text, type: node.expression.text.toLowerCase(), labels, file });
        }
      }
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'collectDefaultMetrics') {
      defaults = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { found, defaults };
}

/** prom-client's Node process metrics (collectDefaultMetrics), as the installed version names them. */
function defaultMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry.getMetricsAsArray().map((m) => ({ name: m.name, type: m.type, labels: m.labelNames ?? [] }));
}

let cached;
/**
 * Every series the services export (apps/<service>/src and libs/<lib>/src): Map name -> Set of
 * label names, including the scrape target's labels, plus Prometheus' own `up`.
 */
export function exportedMetrics() {
  if (cached) return cached;
  const metrics = new Map([['up', new Set(TARGET_LABELS)]]);
  const add = ({ name, type, labels }) => {
    for (const [series, seriesLabels] of seriesOf(name, type, labels)) metrics.set(series, new Set(seriesLabels));
  };
  let defaults = false;
  for (const top of ['apps', 'libs']) {
    for (const pkg of readdirSync(join(ROOT, top), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      const src = join(ROOT, top, pkg.name, 'src');
      let files;
      try {
        files = sourceFiles(src);
      } catch {
        continue; // a package without src/
      }
      for (const file of files) {
        const result = registrationsIn(file);
        result.found.forEach(add);
        defaults ||= result.defaults;
      }
    }
  }
  if (defaults) defaultMetrics().forEach(add);
  cached = metrics;
  return metrics;
}

/** Grafana's interval variables, given a value PromQL accepts as a duration. */
const GRAFANA_INTERVALS = /\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}/g;

/** Metric names of the selectors in one syntax node (an expression or a part of one). */
function selectedMetrics(text, syntaxNode) {
  const names = [];
  syntaxNode.cursor().iterate((node) => {
    if (node.name !== 'VectorSelector') return;
    const identifier = node.node.getChild('Identifier');
    if (identifier) names.push(text.slice(identifier.from, identifier.to));
  });
  return names;
}

/**
 * Problems of one PromQL expression: syntax errors, metrics nobody exports, label matchers or
 * `by (...)` labels a metric does not have. Empty when all is well. Grafana's $__rate_interval and
 * the like are read as 5m; other variables may only stand inside label values.
 */
export function promqlProblems(expr, metrics = exportedMetrics()) {
  const text = expr.replace(GRAFANA_INTERVALS, '5m');
  const problems = [];
  const tree = parser.parse(text);
  tree.iterate({
    enter(node) {
      if (node.type.isError) {
        problems.push(`syntax error at ${node.from}: "${text.slice(Math.max(0, node.from - 20), node.to + 20)}"`);
        return;
      }
      if (node.name === 'AggregateExpr') {
        // sum by (a, b) (...): every metric aggregated must carry a and b, or the groups are wrong.
        const modifier = node.node.getChild('AggregateModifier');
        const body = node.node.getChild('FunctionCallBody');
        if (!modifier?.getChild('By') || !body) return;
        const grouping = modifier.getChild('GroupingLabels')?.getChildren('LabelName') ?? [];
        for (const metric of selectedMetrics(text, body)) {
          for (const label of grouping.map((l) => text.slice(l.from, l.to))) {
            if (metrics.get(metric) && !metrics.get(metric).has(label)) problems.push(`${metric} has no label ${label}`);
          }
        }
        return;
      }
      if (node.name !== 'VectorSelector') return;
      const selector = node.node;
      const identifier = selector.getChild('Identifier');
      if (!identifier) return; // {__name__=...}: not used here
      const name = text.slice(identifier.from, identifier.to);
      const labels = metrics.get(name);
      if (!labels) {
        problems.push(`no service exports the metric ${name}`);
        return;
      }
      const matchers = selector.getChild('LabelMatchers');
      for (const matcher of matchers?.getChildren('UnquotedLabelMatcher') ?? []) {
        const label = matcher.getChild('LabelName');
        const labelName = text.slice(label.from, label.to);
        if (!labels.has(labelName)) problems.push(`${name} has no label ${labelName}`);
      }
    },
  });
  return problems;
}

/** Metric names an expression selects. */
export function metricNames(expr) {
  const text = expr.replace(GRAFANA_INTERVALS, '5m');
  return selectedMetrics(text, parser.parse(text).topNode);
}
