// Starting the platform for a benchmark: migrations, services from their dist/ folders, and the edge
// (deploy/local/edge.mjs) on a temporary route table pointing at this run's ports.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TARGET_ROOT, fail } from './util.mjs';
import { freePort, waitForHttp } from './net.mjs';
import { serviceProcessEnv } from '@byrd/deploy/node-options.mjs';

const routesFile = () => join(TARGET_ROOT, 'deploy/routes.json');
const edgeScript = () => join(TARGET_ROOT, 'deploy/local/edge.mjs');
const READY_TIMEOUT_MS = 90_000;

export const serviceMain = (service) => join(TARGET_ROOT, 'apps', service, 'dist/main.js');
export const serviceMigrate = (service) => join(TARGET_ROOT, 'apps', service, 'dist/migrate.js');

/** `node apps/<service>/dist/migrate.js` against `databaseUrl` (any database: the bare handler uses it too). */
export function migrate(group, service, databaseUrl, label = `${service}-migrate`) {
  return group.runNode(label, serviceMigrate(service), {
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    cwd: join(TARGET_ROOT, 'apps', service),
  });
}

/**
 * Starts `node apps/<service>/dist/main.js` with `env` on a free port and waits for /health/ready.
 * Returns the ProcessGroup entry plus { port, url }.
 */
export async function startService(group, service, env, { nodeArgs = [] } = {}) {
  const port = Number(env.HTTP_PORT) || (await freePort());
  const managed = group.startNode(service, serviceMain(service), {
    // The services' Node flags and heap limit, as a pod of the chart's defaults and npm start get
    // them (env may set its own).
    env: { ...serviceProcessEnv(''), ...env, HTTP_PORT: String(port) },
    nodeArgs,
    cwd: join(TARGET_ROOT, 'apps', service),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health/ready`, { timeoutMs: READY_TIMEOUT_MS, managed, what: service });
  return Object.assign(managed, { port, url });
}

/**
 * Writes a route table for this run next to its logs: the routes of deploy/routes.json whose service
 * runs in this benchmark (`ports`: service -> port; routes of services not started are left out, so
 * nothing is proxied to a stack that `npm start` may be running), plus `extraRoutes`
 * ([{ prefix, service, port }]). Answers the file's path.
 */
export function writeRoutesFile(dir, ports, extraRoutes = []) {
  const table = JSON.parse(readFileSync(routesFile(), 'utf8'));
  const services = {};
  for (const [name, port] of Object.entries(ports))
    services[name] = { ...(table.services?.[name] ?? {}), port };
  for (const route of extraRoutes) services[route.service] = { port: route.port };
  const routes = [
    ...table.routes.filter((route) => route.service in ports),
    ...extraRoutes.map(({ prefix, service }) => ({ prefix, service })),
  ];
  if (routes.length === 0) fail('No route of deploy/routes.json leads to a service of this benchmark.');
  const file = join(dir, 'routes.json');
  writeFileSync(file, `${JSON.stringify({ services, routes }, null, 2)}\n`);
  return file;
}

/**
 * Starts the edge (deploy/local/edge.mjs, its own process) on a free port with `routesFile`. Its
 * per-request access line is off (LOG_LEVEL=silent): the edge writes one for every request at any
 * other level, which would make the benchmark measure a pipe to this harness.
 */
export async function startEdge(group, routesFile, { port, log = false } = {}) {
  port ??= await freePort();
  const managed = group.startNode('edge', edgeScript(), {
    env: {
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      UPSTREAM_HOST: '127.0.0.1',
      ROUTES_FILE: routesFile,
      LOG_LEVEL: log ? 'info' : 'silent',
      NODE_ENV: 'production',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, { timeoutMs: 15_000, managed, what: 'the edge' });
  return Object.assign(managed, { port, url });
}
