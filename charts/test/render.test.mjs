// helm lint and helm template of the chart with its defaults and each example install
// (deploy/values/*.yaml): every manifest valid, every service complete, safe to run and to upgrade.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXAMPLE_VALUES,
  VALUE_SETS,
  chartCopy,
  chartValues,
  component,
  hookOf,
  inFlightLimits,
  ingressHosts,
  lint,
  named,
  ofKind,
  readValues,
  renderAgainstCluster,
  renderOk,
  routeTable,
  selects,
  validateManifest,
} from '../lib/chart.mjs';
import { oldSpaceMiB, SERVICE_NODE_OPTIONS, YOUNG_GENERATION_MIB } from '@byrd/deploy/node-options.mjs';

/** Services that keep no data of their own (values: database.enabled false): no DATABASE_URL, no migrations. */
const DATABASELESS = ['hosted-form-bff', 'api-docs'];
/** Services that do not connect to NATS (values: nats.enabled false): no NATS settings, no NATS credentials. */
const NATS_LESS = ['api-docs'];

/** nats.rateLimitsBucket of an install: the chart's default unless its values files set one. */
const rateLimitsBucket = (files) =>
  files.reduce((bucket, file) => readValues(file).nats?.rateLimitsBucket ?? bucket, chartValues().nats.rateLimitsBucket);

const podSpecs = (docs) => [
  ...ofKind(docs, 'Deployment').map((d) => ({ name: `Deployment ${d.metadata.name}`, spec: d.spec.template.spec })),
  ...ofKind(docs, 'Job').map((j) => ({ name: `Job ${j.metadata.name}`, spec: j.spec.template.spec })),
];

for (const [install, values] of Object.entries(VALUE_SETS)) {
  describe(`install with ${install} values`, () => {
    let docs;
    let deployments;
    before(() => {
      docs = renderOk({ values });
      deployments = ofKind(docs, 'Deployment');
    });

    test("runs the chart's appVersion (no example pins a tag an upgrade would keep) and links orders to the install's hosted form", () => {
      const chart = chartCopy({ chartYaml: (text) => text.replace(/^appVersion:.*$/m, 'appVersion: "9.9.9"') });
      const images = podSpecs(renderOk({ chart, values })).flatMap(({ spec }) =>
        [...(spec.initContainers ?? []), ...spec.containers].map((c) => c.image),
      );
      assert.ok(images.length > 0);
      for (const image of images) assert.match(image, /:9\.9\.9$/, image);
      const orders = deployments.find((d) => component(d) === 'orders');
      const config = named(docs, 'ConfigMap', orders.spec.template.spec.containers[0].envFrom[0].configMapRef.name);
      assert.match(config.data.CHECKOUT_URL ?? '', new RegExp(`^https?://${ingressHosts(values).checkout}/checkout$`));
    });

    test('helm lint --strict finds nothing', () => {
      const result = lint({ values });
      assert.equal(result.status, 0, result.stdout + result.stderr);
      assert.doesNotMatch(result.stdout, /\[(WARNING|ERROR)\]/);
    });

    test('every rendered manifest is a valid Kubernetes object (kubernetes-models)', async () => {
      assert.ok(docs.length > 0);
      for (const doc of docs) {
        try {
          await validateManifest(doc);
        } catch (error) {
          assert.fail(`${doc.kind} ${doc.metadata?.name}: ${error.message}`);
        }
      }
    });

    test('every service of the route table is deployed with all its objects', () => {
      const services = Object.keys(routeTable().services).sort();
      assert.deepEqual(deployments.map(component).sort(), services);
      for (const name of services) {
        const objects = docs.filter((d) => component(d) === name).map((d) => d.kind);
        for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'ConfigMap', 'NetworkPolicy']) {
          assert.ok(objects.includes(kind), `${name} has no ${kind}`);
        }
      }
      assert.equal(ofKind(docs, 'Secret').length, 0, 'the chart creates no Secret: it references existing ones');
    });

    test('every Deployment has both probes, resources and the restricted security context', () => {
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        const [container] = pod.containers;
        const where = `Deployment ${d.metadata.name}`;
        assert.equal(container.ports[0].name, 'http', where);
        assert.equal(container.livenessProbe?.httpGet?.path, '/health/live', `${where}: liveness probe`);
        assert.equal(container.livenessProbe.httpGet.port, 'http', where);
        assert.equal(container.readinessProbe?.httpGet?.path, '/health/ready', `${where}: readiness probe`);
        assert.equal(container.readinessProbe.httpGet.port, 'http', where);
        assert.ok(container.resources?.requests?.cpu && container.resources.requests.memory, `${where}: requests`);
        assert.ok(container.resources.limits?.memory, `${where}: memory limit`);
        assert.ok(pod.topologySpreadConstraints?.length > 0, `${where}: topology spread`);
        for (const constraint of pod.topologySpreadConstraints) {
          assert.ok(selects(constraint.labelSelector.matchLabels, d.spec.template.metadata.labels), where);
        }
        assert.equal(pod.automountServiceAccountToken, false, `${where}: no API token mounted`);
        assert.ok(named(docs, 'ServiceAccount', pod.serviceAccountName), `${where}: its ServiceAccount`);
        assert.ok(container.lifecycle?.preStop?.exec, `${where}: preStop before SIGTERM`);
      }
    });

    test('services and hook Jobs run restricted: non-root, read-only root with /tmp, no capabilities, RuntimeDefault seccomp', () => {
      for (const { name, spec } of podSpecs(docs)) {
        assert.equal(spec.securityContext?.runAsNonRoot, true, `${name}: pod runAsNonRoot`);
        assert.ok(spec.securityContext.runAsUser > 0, `${name}: numeric non-root uid`);
        assert.equal(spec.securityContext.seccompProfile?.type, 'RuntimeDefault', `${name}: pod seccomp`);
        for (const c of spec.containers) {
          const sc = c.securityContext ?? {};
          assert.equal(sc.allowPrivilegeEscalation, false, `${name}: allowPrivilegeEscalation`);
          assert.equal(sc.readOnlyRootFilesystem, true, `${name}: readOnlyRootFilesystem`);
          assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${name}: drop ALL`);
          assert.equal(sc.runAsNonRoot, true, `${name}: container runAsNonRoot`);
          assert.equal(sc.seccompProfile?.type, 'RuntimeDefault', `${name}: container seccomp`);
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          assert.ok(tmp, `${name}: /tmp is mounted`);
          assert.ok(spec.volumes.find((v) => v.name === tmp.name)?.emptyDir, `${name}: /tmp is an emptyDir`);
        }
      }
    });

    test('each pod listens where its Service, probes and Ingress point, and can drain before it is killed', () => {
      for (const d of deployments) {
        const name = component(d);
        const [container] = d.spec.template.spec.containers;
        const config = named(docs, 'ConfigMap', container.envFrom[0].configMapRef.name);
        assert.ok(config, `${name}: its ConfigMap`);
        assert.equal(Number(config.data.HTTP_PORT), routeTable().services[name].port, `${name}: HTTP_PORT`);
        assert.equal(container.ports[0].containerPort, routeTable().services[name].port, `${name}: containerPort`);
        const service = named(docs, 'Service', d.metadata.name);
        assert.ok(selects(service.spec.selector, d.spec.template.metadata.labels), `${name}: Service selects it`);
        assert.equal(config.data.NODE_ENV, 'production');
        const preStopMs = Number(container.lifecycle.preStop.exec.command.at(-1)) * 1000;
        const budgetMs = d.spec.template.spec.terminationGracePeriodSeconds * 1000;
        assert.ok(
          budgetMs > preStopMs + Number(config.data.SHUTDOWN_GRACE_MS),
          `${name}: terminationGracePeriodSeconds covers preStop + SHUTDOWN_GRACE_MS`,
        );
        assert.match(d.spec.template.metadata.annotations['checksum/config'], /^[0-9a-f]{64}$/);
        assert.equal(d.spec.strategy.rollingUpdate.maxUnavailable, 0, `${name}: rolls without losing capacity`);
      }
    });

    test("each service's V8 heap limit follows its memory limit", () => {
      for (const d of deployments) {
        const name = component(d);
        const [container] = d.spec.template.spec.containers;
        const config = named(docs, 'ConfigMap', container.envFrom[0].configMapRef.name);
        const limit = container.resources?.limits?.memory;
        if (!limit) {
          assert.equal(config.data.NODE_OPTIONS, undefined, `${name}: no limit, the image's flags`);
          continue;
        }
        const units = { Ki: 1 / 1024, Mi: 1, Gi: 1024, M: 1e6 / 1048576, G: 1e9 / 1048576 };
        const [, amount, unit] = /^([0-9.]+)(Ki|Mi|Gi|M|G)?$/.exec(limit);
        const mib = Number(amount) * (unit ? units[unit] : 1 / 1048576);
        // The chart's rule is the one npm start, the benchmarks and the chaos run apply.
        const oldSpace = oldSpaceMiB(mib);
        assert.equal(oldSpace, Math.max(64, Math.floor(mib * 0.75) - YOUNG_GENERATION_MIB), name);
        assert.equal(config.data.NODE_OPTIONS, `${SERVICE_NODE_OPTIONS} --max-old-space-size=${oldSpace}`, name);
        // The heap limit plus the young generation stays under the container's limit.
        assert.ok(oldSpace + YOUNG_GENERATION_MIB < mib, `${name}: ${oldSpace} MiB old + young < ${limit}`);
      }
    });

    test('secrets come only from existing Secrets, by reference', () => {
      for (const d of deployments) {
        const [container] = d.spec.template.spec.containers;
        const env = container.env ?? [];
        const database = env.find((e) => e.name === 'DATABASE_URL');
        if (DATABASELESS.includes(component(d))) {
          assert.equal(database, undefined, `${d.metadata.name} has no database`);
        } else {
          assert.ok(database?.valueFrom?.secretKeyRef?.name, `${d.metadata.name}: DATABASE_URL from a Secret`);
        }
        for (const entry of env) {
          assert.equal(entry.value, undefined, `${d.metadata.name}: ${entry.name} is not inline`);
          assert.ok(entry.valueFrom.secretKeyRef.name && entry.valueFrom.secretKeyRef.key, entry.name);
        }
        const config = named(docs, 'ConfigMap', d.metadata.name);
        for (const key of Object.keys(config.data)) {
          assert.doesNotMatch(key, /PASSWORD|SECRET|KEY$|DATABASE_URL/, `${key} must not be in a ConfigMap`);
        }
      }
      const payments = named(docs, 'Deployment', deployments.find((d) => component(d) === 'payments')?.metadata.name);
      if (payments) {
        const seal = payments.spec.template.spec.containers[0].env.find((e) => e.name === 'CARD_SEAL_KEY');
        assert.ok(seal?.valueFrom.secretKeyRef, 'payments: CARD_SEAL_KEY (shared by every replica) from a Secret');
        // Browsers' ?checkoutKey= attempts count with the hosted form's, in the values' bucket.
        assert.equal(named(docs, 'ConfigMap', payments.metadata.name).data.RATE_LIMIT_BUCKET, rateLimitsBucket(values));
      }
      const orders = named(docs, 'Deployment', deployments.find((d) => component(d) === 'orders')?.metadata.name);
      if (orders) {
        const trusted = orders.spec.template.spec.containers[0].env.find((e) => e.name === 'RPC_TRUSTED_CALLERS');
        assert.ok(trusted?.valueFrom.secretKeyRef, 'orders: RPC_TRUSTED_CALLERS (it locks orders for payments only) from a Secret');
        const key = orders.spec.template.spec.containers[0].env.find((e) => e.name === 'RPC_SIGNING_KEY');
        assert.ok(key?.valueFrom.secretKeyRef, 'orders: RPC_SIGNING_KEY (payments believes only its signed answers) from a Secret');
      }
      const vault = named(docs, 'Deployment', deployments.find((d) => component(d) === 'gateway-tokens')?.metadata.name);
      if (vault) {
        for (const name of ['VAULT_KEKS', 'VAULT_FINGERPRINT_KEY', 'RPC_SIGNING_KEY', 'RPC_TRUSTED_CALLERS']) {
          const entry = vault.spec.template.spec.containers[0].env.find((e) => e.name === name);
          assert.ok(entry?.valueFrom.secretKeyRef, `gateway-tokens: ${name} from a Secret`);
        }
      }
      const bff = named(docs, 'Deployment', deployments.find((d) => component(d) === 'hosted-form-bff')?.metadata.name);
      if (bff) {
        const key = bff.spec.template.spec.containers[0].env.find((e) => e.name === 'RPC_SIGNING_KEY');
        assert.ok(key?.valueFrom.secretKeyRef, 'hosted-form-bff: RPC_SIGNING_KEY (it sends card data) from a Secret');
        // Its replicas share one count per client: the rate-limit bucket of the values.
        assert.equal(named(docs, 'ConfigMap', bff.metadata.name).data.RATE_LIMIT_BUCKET, rateLimitsBucket(values));
      }
      const webhooks = named(
        docs,
        'Deployment',
        deployments.find((d) => component(d) === 'webhook-service')?.metadata.name,
      );
      if (webhooks) {
        const keys = webhooks.spec.template.spec.containers[0].env.find((e) => e.name === 'WEBHOOK_SECRETS_KEYS');
        assert.ok(keys?.valueFrom.secretKeyRef, 'webhook-service: WEBHOOK_SECRETS_KEYS from a Secret');
      }
    });

    test('hooks run NATS provisioning, then every migration, before the Deployments', () => {
      const jobs = ofKind(docs, 'Job');
      for (const doc of docs.filter((d) => d.kind !== 'Job')) {
        assert.equal(hookOf(doc), undefined, `${doc.kind} ${doc.metadata.name} is a regular resource`);
      }
      const weight = (job) => Number(job.metadata.annotations['helm.sh/hook-weight']);
      for (const job of jobs) {
        // pre-install/pre-upgrade hooks complete before Helm applies the release's other objects.
        assert.deepEqual(hookOf(job).split(',').sort(), ['pre-install', 'pre-upgrade'], job.metadata.name);
        assert.equal(job.spec.template.spec.restartPolicy, 'Never');
      }
      const provision = jobs.find((j) => component(j) === 'nats-provision');
      assert.ok(provision, 'the NATS provisioning Job');
      assert.deepEqual(provision.spec.template.spec.containers[0].command.slice(-2), ['nats', 'provision']);
      const migrations = jobs.filter((j) => component(j)?.endsWith('-migrations'));
      assert.deepEqual(
        migrations.map((j) => component(j).replace(/-migrations$/, '')).sort(),
        deployments
          .map(component)
          .filter((c) => !DATABASELESS.includes(c))
          .sort(),
        'one migrations Job per service with a database',
      );
      for (const job of migrations) {
        assert.ok(weight(provision) < weight(job), `${job.metadata.name} runs after NATS provisioning`);
        const deployment = deployments.find((d) => component(d) === component(job).replace(/-migrations$/, ''));
        const [migrate] = job.spec.template.spec.containers;
        const [app] = deployment.spec.template.spec.containers;
        assert.deepEqual(migrate.command, ['node', 'dist/migrate.js']);
        assert.equal(migrate.image, app.image, `${job.metadata.name}: the same image as the service`);
        assert.deepEqual(
          migrate.env.find((e) => e.name === 'DATABASE_URL'),
          app.env.find((e) => e.name === 'DATABASE_URL'),
          `${job.metadata.name}: the same database as the service`,
        );
      }
      // The provisioning Job creates what the services use (and they keep it as it is at boot).
      const env = Object.fromEntries(provision.spec.template.spec.containers[0].env.map((e) => [e.name, e.value ?? e.valueFrom]));
      for (const d of deployments) {
        const config = named(docs, 'ConfigMap', d.metadata.name).data;
        for (const key of ['NATS_URL', 'NATS_SUBJECT_PREFIX', 'EVENTS_STREAM', 'EVENTS_STREAM_REPLICAS', 'API_KEYS_BUCKET', 'MERCHANTS_BUCKET']) {
          // The docs service is the one that never talks to NATS: it gets none of its settings.
          const expected = NATS_LESS.includes(component(d)) ? undefined : env[key];
          assert.equal(config[key], expected, `${key} of the provisioning Job and ${d.metadata.name}`);
        }
        // The rate-limit counts too: provisioned with the stream's copies, not left to a service's
        // first start (which, before, made it with one copy whatever streamReplicas said).
        if (config.RATE_LIMIT_BUCKET !== undefined) {
          assert.equal(config.RATE_LIMIT_BUCKET, env.RATE_LIMIT_BUCKET, `RATE_LIMIT_BUCKET of the provisioning Job and ${d.metadata.name}`);
        }
        // Client addresses (logs, the hosted form's rate limits) believe the configured proxy hops.
        assert.equal(config.TRUSTED_PROXIES, '1', `${d.metadata.name}: TRUSTED_PROXIES`);
        // No request waits on a silent or locked database for ever (the services' default, 30 s).
        assert.equal(
          config.DATABASE_STATEMENT_TIMEOUT_MS,
          DATABASELESS.includes(component(d)) ? undefined : '30000',
          `${d.metadata.name}: DATABASE_STATEMENT_TIMEOUT_MS`,
        );
      }
    });

    test('a shutdown outlasts the longest wait in flight: acquirer, hosted-form payment, webhook delivery', () => {
      // SHUTDOWN_GRACE_MS runs out with process.exit(1), cutting off whatever is still in flight.
      // The chart's check refuses a grace not longer than the limit; the shipped values leave 5 s more
      // for the commit, the event and the rest of the drain.
      for (const [name, { env, ms }] of Object.entries(inFlightLimits())) {
        const d = deployments.find((deployment) => component(deployment) === name);
        if (!d) continue;
        const config = named(docs, 'ConfigMap', d.metadata.name).data;
        const limit = env && config[env] !== undefined ? Number(config[env]) : ms;
        const grace = Number(config.SHUTDOWN_GRACE_MS);
        const what = `${name}: SHUTDOWN_GRACE_MS ${grace} covers ${env ?? 'its'} ${limit} ms with 5 s to spare`;
        assert.ok(grace >= limit + 5000, what);
      }
    });

    test('autoscaling and disruption budgets never block a node drain', () => {
      for (const d of deployments) {
        const hpa = named(docs, 'HorizontalPodAutoscaler', d.metadata.name);
        const pdb = named(docs, 'PodDisruptionBudget', d.metadata.name);
        const replicas = hpa ? hpa.spec.minReplicas : d.spec.replicas;
        if (hpa) {
          assert.equal(d.spec.replicas, undefined, `${d.metadata.name}: the HPA owns the replica count`);
          assert.equal(hpa.spec.scaleTargetRef.name, d.metadata.name);
        }
        if (pdb) {
          assert.ok(selects(pdb.spec.selector.matchLabels, d.spec.template.metadata.labels));
          if (Number.isInteger(pdb.spec.minAvailable)) {
            assert.ok(pdb.spec.minAvailable < replicas, `${d.metadata.name}: minAvailable below replicas`);
          }
        }
      }
    });

    test('NetworkPolicies admit only the ingress controller to services with public routes', () => {
      const publicServices = new Set(routeTable().routes.map((r) => r.service));
      for (const d of deployments) {
        const policy = named(docs, 'NetworkPolicy', d.metadata.name);
        assert.ok(selects(policy.spec.podSelector.matchLabels, d.spec.template.metadata.labels));
        assert.ok(policy.spec.policyTypes.includes('Ingress'));
        const allowed = policy.spec.ingress.flatMap((rule) => rule.from);
        assert.equal(allowed.length > 0, publicServices.has(component(d)), d.metadata.name);
        for (const rule of policy.spec.ingress) assert.deepEqual(rule.ports, [{ port: 'http', protocol: 'TCP' }]);
      }
    });
  });
}

test('the sandbox, sharing a NATS with other installs, uses a stream and buckets of its own', () => {
  const natsNames = (values) => {
    const docs = renderOk({ values });
    const env = ofKind(docs, 'Job').find((j) => component(j) === 'nats-provision').spec.template.spec.containers[0].env;
    const names = ['EVENTS_STREAM', 'API_KEYS_BUCKET', 'MERCHANTS_BUCKET', 'RATE_LIMIT_BUCKET'];
    return Object.fromEntries(names.map((name) => [name, env.find((e) => e.name === name)?.value]));
  };
  const [standard, sandbox] = [natsNames([]), natsNames([EXAMPLE_VALUES.sandbox])];
  for (const [name, value] of Object.entries(sandbox)) {
    assert.ok(value, `the provisioning Job creates ${name}`);
    assert.notEqual(value, standard[name], `${name}: the sandbox's own, not shared with another install`);
  }
});

test('turning autoscaling on keeps the live replica count: the upgrade never scales a Deployment down first', async () => {
  // A previous release without autoscaling runs orders with 2 replicas, which the load took to 4.
  const [orders, payments] = ['orders', 'payments'].map(
    (name) => ofKind(renderOk(), 'Deployment').find((d) => component(d) === name).metadata.name,
  );
  const live = [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: orders }, spec: { replicas: 4 } }];
  const autoscaled = await renderAgainstCluster({ live, values: [{ serviceDefaults: { autoscaling: { enabled: true } } }] });
  // Without the field, Helm's three-way merge would delete the 2 the last release set: 1 replica at once.
  assert.equal(named(autoscaled, 'Deployment', orders).spec.replicas, 4, 'the live count, which the HPA then owns');
  // Not in the cluster yet (a first install): the HPA sets the count from its minimum.
  assert.equal(named(autoscaled, 'Deployment', payments).spec.replicas, undefined);
  // Without autoscaling the values decide, whatever runs.
  assert.equal(named(await renderAgainstCluster({ live }), 'Deployment', orders).spec.replicas, 2);
});

test('NATS over TLS: its CA and client certificate reach every pod that talks to NATS, and no other', async () => {
  const tls = { caSecret: 'nats-ca', caKey: 'ca.pem', clientCertSecret: 'byrd-nats-client' };
  const docs = renderOk({ values: [EXAMPLE_VALUES.production, { nats: { tls } }] });
  /** The Secret and key a file of the container comes from, through its mounts and volumes. */
  const sourceOf = (spec, container, path) => {
    const mount = container.volumeMounts.find((m) => path.startsWith(`${m.mountPath}/`));
    const volume = mount && spec.volumes.find((v) => v.name === mount.name);
    const item = volume?.secret?.items?.find((i) => `${mount.mountPath}/${i.path}` === path);
    return item && { secret: volume.secret.secretName, key: item.key };
  };
  const pods = [
    ...ofKind(docs, 'Deployment').map((d) => ({
      doc: d,
      spec: d.spec.template.spec,
      env: named(docs, 'ConfigMap', d.metadata.name).data,
    })),
    ...ofKind(docs, 'Job').map((j) => ({
      doc: j,
      spec: j.spec.template.spec,
      env: Object.fromEntries(j.spec.template.spec.containers[0].env.map((e) => [e.name, e.value])),
    })),
  ];
  for (const { doc, spec, env } of pods) {
    const [container] = spec.containers;
    const name = `${doc.kind} ${doc.metadata.name}`;
    if (env.NATS_URL === undefined) {
      assert.ok(!spec.volumes.some((v) => [tls.caSecret, tls.clientCertSecret].includes(v.secret?.secretName)), `${name}: no NATS certificates`);
      continue;
    }
    assert.deepEqual(sourceOf(spec, container, env.NATS_TLS_CA_FILE), { secret: 'nats-ca', key: 'ca.pem' }, `${name}: NATS_TLS_CA_FILE`);
    assert.deepEqual(sourceOf(spec, container, env.NATS_TLS_CERT_FILE), { secret: 'byrd-nats-client', key: 'tls.crt' }, `${name}: NATS_TLS_CERT_FILE`);
    assert.deepEqual(sourceOf(spec, container, env.NATS_TLS_KEY_FILE), { secret: 'byrd-nats-client', key: 'tls.key' }, `${name}: NATS_TLS_KEY_FILE`);
    await validateManifest(doc);
  }
  assert.ok(pods.some(({ doc }) => component(doc) === 'nats-provision'), 'the provisioning Job is among them');
  // Without nats.tls: no such variables (the system's CAs), as before.
  for (const config of ofKind(renderOk(), 'ConfigMap')) {
    assert.equal(config.data?.NATS_TLS_CA_FILE, undefined, config.metadata.name);
  }
});

test('a config change rolls the pods of that service only (checksum/config)', () => {
  const checksums = (docs) =>
    Object.fromEntries(
      ofKind(docs, 'Deployment').map((d) => [component(d), d.spec.template.metadata.annotations['checksum/config']]),
    );
  const before = checksums(renderOk());
  const after = checksums(renderOk({ values: [{ services: { orders: { logLevel: 'debug' } } }] }));
  assert.notEqual(after.orders, before.orders);
  for (const name of Object.keys(before).filter((n) => n !== 'orders')) assert.equal(after[name], before[name], name);
});

test('probes are overridable key by key', () => {
  const docs = renderOk({
    values: [{ services: { orders: { livenessProbe: { periodSeconds: 30 }, readinessProbe: { httpGet: { path: '/ready' } } } } }],
  });
  const orders = ofKind(docs, 'Deployment').find((d) => component(d) === 'orders').spec.template.spec.containers[0];
  assert.equal(orders.livenessProbe.periodSeconds, 30);
  assert.equal(orders.livenessProbe.httpGet.path, '/health/live');
  assert.equal(orders.readinessProbe.httpGet.path, '/ready');
  assert.equal(orders.readinessProbe.httpGet.port, 'http');
});

test('a disabled service leaves no object and no route behind', () => {
  const docs = renderOk({ values: [{ services: { payments: { enabled: false } } }] });
  assert.equal(docs.filter((d) => component(d)?.startsWith('payments')).length, 0);
  const paths = ofKind(docs, 'Ingress').flatMap((i) => i.spec.rules.flatMap((r) => r.http.paths));
  assert.ok(paths.every((p) => !p.backend.service.name.endsWith('-payments')));
  assert.ok(paths.some((p) => p.path === '/api/v2/orders'));
});

test('the docs service publishes /docs on the gateway host and reads every enabled public service inside the cluster', () => {
  const docs = renderOk({
    values: [{ services: { payments: { enabled: false } }, nats: { auth: { existingSecret: 'nats-auth' } } }],
  });
  const paths = ofKind(docs, 'Ingress').flatMap((i) =>
    i.spec.rules.flatMap((r) => r.http.paths.map((p) => ({ host: r.host, ...p }))),
  );
  const route = paths.find((p) => p.path === '/docs');
  assert.equal(route.host, 'api.byrd.example.com');
  assert.equal(route.backend.service.name, 'byrd-api-docs');

  const config = named(docs, 'ConfigMap', 'byrd-api-docs').data;
  const table = JSON.parse(config.ROUTE_TABLE);
  // The disabled service is not in its table, so its document is not awaited forever.
  assert.deepEqual(Object.keys(table.services).sort(), ['api-docs', 'gateway-tokens', 'hosted-form-bff', 'orders', 'webhook-service']);
  assert.ok(table.routes.every((r) => r.service !== 'payments'));
  // Every upstream the template names is a Service of this release on its http port.
  for (const [service, { port }] of Object.entries(table.services)) {
    const url = new URL(config.UPSTREAM_URL_TEMPLATE.replace('{service}', service).replace('{port}', String(port)));
    const target = named(docs, 'Service', url.hostname);
    assert.equal(target.spec.ports.find((p) => p.name === 'http').port, port, service);
  }
  // No NATS credentials for a pod that does not use NATS; the others still get them.
  const envOf = (name) => named(docs, 'Deployment', name).spec.template.spec.containers[0].env ?? [];
  assert.ok(envOf('byrd-api-docs').every((e) => !e.name.startsWith('NATS_')));
  assert.ok(envOf('byrd-orders').some((e) => e.name === 'NATS_PASSWORD'));

  // Each public service admits the docs pods on its HTTP port; the docs pods admit only the ingress.
  const docsPods = { matchLabels: named(docs, 'Deployment', 'byrd-api-docs').spec.selector.matchLabels };
  for (const service of ['orders', 'gateway-tokens', 'webhook-service', 'hosted-form-bff']) {
    const policy = named(docs, 'NetworkPolicy', `byrd-${service}`);
    assert.ok(
      policy.spec.ingress[0].from.some((peer) => JSON.stringify(peer.podSelector) === JSON.stringify(docsPods)),
      `${service} admits api-docs`,
    );
  }
  const own = named(docs, 'NetworkPolicy', 'byrd-api-docs');
  assert.ok(own.spec.ingress[0].from.every((peer) => !peer.podSelector?.matchLabels?.['app.kubernetes.io/component']));
});

test('without the docs service, no /docs route and no service admits it', () => {
  const docs = renderOk({ values: [{ services: { 'api-docs': { enabled: false } } }] });
  const paths = ofKind(docs, 'Ingress').flatMap((i) => i.spec.rules.flatMap((r) => r.http.paths));
  assert.ok(paths.every((p) => p.path !== '/docs'));
  assert.ok(!JSON.stringify(ofKind(docs, 'NetworkPolicy')).includes('api-docs'));
});

/** Does api-docs' NetworkPolicy let it open a connection to this Deployment's pods on their HTTP port? */
function docsReach(docs, deployment) {
  const policy = named(docs, 'NetworkPolicy', 'byrd-api-docs');
  if (!policy.spec.policyTypes.includes('Egress')) return true;
  const labels = deployment.spec.template.metadata.labels;
  const { containerPort, name: portName } = deployment.spec.template.spec.containers[0].ports[0];
  // A rule without `to` reaches everywhere, without `ports` every port (NetworkPolicy semantics);
  // a pod of this namespace is a podSelector-only peer.
  const toPod = (peer) =>
    peer.podSelector && !peer.namespaceSelector && !peer.ipBlock && selects(peer.podSelector.matchLabels, labels);
  const onPort = (p) => (p.port === containerPort || p.port === portName) && (p.protocol ?? 'TCP') === 'TCP';
  return (policy.spec.egress ?? []).some(
    (rule) => (!rule.to?.length || rule.to.some(toPod)) && (!rule.ports?.length || rule.ports.some(onPort)),
  );
}

test('with egress restricted (production values), api-docs may reach each service it reads, on its port', () => {
  const docs = renderOk({ values: [EXAMPLE_VALUES.production] });
  const policy = named(docs, 'NetworkPolicy', 'byrd-api-docs');
  assert.ok(policy.spec.policyTypes.includes('Egress'), 'api-docs egress is restricted');
  const table = JSON.parse(named(docs, 'ConfigMap', 'byrd-api-docs').data.ROUTE_TABLE);
  const read = [...new Set(table.routes.map((r) => r.service))].filter((s) => s !== 'api-docs');
  assert.deepEqual(read.sort(), ['gateway-tokens', 'hosted-form-bff', 'orders', 'payments', 'webhook-service']);
  for (const service of read) {
    assert.ok(docsReach(docs, named(docs, 'Deployment', `byrd-${service}`)), `api-docs reaches ${service}`);
  }
  // Only those: not the pods of a service it does not read.
  const without = renderOk({ values: [EXAMPLE_VALUES.production, { services: { payments: { enabled: false } } }] });
  assert.ok(docsReach(without, named(without, 'Deployment', 'byrd-orders')), 'api-docs reaches orders');
  assert.ok(!JSON.stringify(named(without, 'NetworkPolicy', 'byrd-api-docs').spec.egress).includes('"payments"'));
});
