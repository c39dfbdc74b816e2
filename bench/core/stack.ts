// Starting the platform for a benchmark: migrations, services from their dist/ folders, the edge
// (deploy/local/edge.mjs) on a temporary route table pointing at this run's ports, and the harness's
// own processes (bare handler, receivers); readiness checks and one-off requests.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadTesting } from './environment.js';
import type { Managed, ProcessGroup } from './processes.js';
import { BENCH_DIST, fail, pollUntil, target } from './util.js';

const READY_TIMEOUT_MS = 90_000;

export const serviceMain = (service: string) => join(target.root, 'apps', service, 'dist/main.js');
export const serviceMigrate = (service: string) => join(target.root, 'apps', service, 'dist/migrate.js');

/** A running process with the address it answers on. */
export type Listening = Managed & { port: number; url: string };

export async function freePort(): Promise<number> {
  return (await loadTesting()).freePort();
}

/** `node apps/<service>/dist/migrate.js` against `databaseUrl` (any database: the bare handler uses it too). */
export function migrate(
  group: ProcessGroup,
  service: string,
  databaseUrl: string,
  label = `${service}-migrate`,
) {
  return group.runNode(label, serviceMigrate(service), {
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    cwd: join(target.root, 'apps', service),
  });
}

/** Starts `node apps/<service>/dist/main.js` with `env` (HTTP_PORT set) and waits for /health/ready. */
export async function startService(
  group: ProcessGroup,
  service: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Listening> {
  // The measured commit's own settings (a commit from before serviceProcessEnv had flags only).
  const settings = (await import(pathToFileURL(join(target.root, 'deploy/node-options.mjs')).href)) as {
    serviceNodeOptions(own: string): string;
    serviceProcessEnv?(own: string): Record<string, string>;
  };
  const processEnv = settings.serviceProcessEnv?.('') ?? { NODE_OPTIONS: settings.serviceNodeOptions('') };
  const managed = group.startNode(service, serviceMain(service), {
    // The services' Node flags, heap limit and malloc arenas, as a pod of the chart's defaults and
    // npm start get them (env may set its own).
    env: { ...processEnv, ...env },
    nodeArgs,
    cwd: join(target.root, 'apps', service),
  });
  const url = `http://127.0.0.1:${env.HTTP_PORT}`;
  await waitForHttp(`${url}/health/ready`, { timeoutMs: READY_TIMEOUT_MS, managed, what: service });
  return Object.assign(managed, { port: Number(env.HTTP_PORT), url });
}

/** Starts one of the harness's own programs (bench/dist/<script>) on a free port; waits for `health`. */
export async function startHelper(
  group: ProcessGroup,
  name: string,
  script: string,
  env: Record<string, string>,
  health: string,
): Promise<Listening> {
  const port = await freePort();
  const managed = group.startNode(name, join(BENCH_DIST, script), {
    env: { NODE_ENV: 'production', HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${health}`, { managed, what: name });
  return Object.assign(managed, { port, url });
}

interface RouteTable {
  services: Record<string, { port: number }>;
  routes: { prefix: string; service: string }[];
}

/**
 * Writes a route table for this run next to its logs: the routes of deploy/routes.json whose service
 * runs in this benchmark (`ports`: service -> port; routes of services not started are left out, so
 * nothing is proxied to a stack that `npm start` may be running), plus `extra` ({ prefix, service,
 * port }). Answers the file's path.
 */
export function writeRoutesFile(
  dir: string,
  ports: Record<string, number>,
  extra: { prefix: string; service: string; port: number }[] = [],
): string {
  const table = JSON.parse(readFileSync(join(target.root, 'deploy/routes.json'), 'utf8')) as RouteTable;
  const services: RouteTable['services'] = {};
  for (const [name, port] of Object.entries(ports))
    services[name] = { ...(table.services?.[name] ?? {}), port };
  for (const route of extra) services[route.service] = { port: route.port };
  const routes = [
    ...table.routes.filter((route) => route.service in ports),
    ...extra.map(({ prefix, service }) => ({ prefix, service })),
  ];
  const file = join(dir, 'routes.json');
  writeFileSync(file, `${JSON.stringify({ services, routes }, null, 2)}\n`);
  return file;
}

/**
 * Starts the edge (deploy/local/edge.mjs, its own process) with `routesFile`. Its per-request access
 * line is off (LOG_LEVEL=silent): it would make the benchmark measure a pipe to this harness.
 */
export async function startEdge(group: ProcessGroup, routesFile: string, port?: number): Promise<Listening> {
  port ??= await freePort();
  const managed = group.startNode('edge', join(target.root, 'deploy/local/edge.mjs'), {
    env: {
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      UPSTREAM_HOST: '127.0.0.1',
      ROUTES_FILE: routesFile,
      LOG_LEVEL: 'silent',
      NODE_ENV: 'production',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, { timeoutMs: 15_000, managed, what: 'the edge' });
  return Object.assign(managed, { port, url });
}

async function httpStatus(url: string): Promise<number | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

/** Waits until `url` answers 200; gives up at once when `managed` exits. */
export async function waitForHttp(
  url: string,
  { timeoutMs = 60_000, managed, what }: { timeoutMs?: number; managed: Managed; what: string },
): Promise<void> {
  const ok = await pollUntil(async () => !managed.alive() || (await httpStatus(url)) === 200, {
    timeoutMs,
    intervalMs: 200,
  });
  if (!managed.alive()) fail(`${what} exited before it answered ${url}.`);
  if (!ok) fail(`${what} did not answer 200 on ${url} within ${timeoutMs / 1000} s.`);
}

/** An answer: its status and body (parsed when JSON; `T` is what the caller expects, unchecked). */
export interface JsonAnswer<T> {
  status: number;
  body: T | undefined;
}

/** One request with a JSON body; answers { status, body } (body parsed when JSON). */
export async function requestJson<T = unknown>(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
  }: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<JsonAnswer<T>> {
  const response = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: text ? (JSON.parse(text) as T) : undefined };
  } catch {
    return { status: response.status, body: undefined };
  }
}
