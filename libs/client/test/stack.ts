import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The services behind the merchant API, the hosted form's backend (a shopper's cancel button) and the
 * docs service (the merged OpenAPI document at /docs).
 */
const SERVICES = [
  'orders',
  'payments',
  'gateway-tokens',
  'webhook-service',
  'hosted-form-bff',
  'api-docs',
] as const;
type Service = (typeof SERVICES)[number];
/** The services with a database of their own to migrate. */
const MIGRATED: readonly Service[] = ['orders', 'payments', 'gateway-tokens', 'webhook-service'];

/** Four services booting at once on two cores take a while; more when other suites run. */
const READY_TIMEOUT_MS = 60_000;

const key = () => randomBytes(32).toString('base64');
const SERVICE_ENV: Record<Service, Record<string, string>> = {
  orders: {},
  'hosted-form-bff': {},
  'api-docs': { UPSTREAM_URL_TEMPLATE: 'http://127.0.0.1:{port}' },
  payments: {
    CARD_SEAL_KEY: key(),
    // The recovery of a payment whose acquirer answer was lost, in seconds (default 60 s): the
    // sandbox answers that card at once, so a test waiting for the outcome waits this long.
    ACQUIRER_TIMEOUT_MS: '2000',
    ACQUIRER_RECOVERY_AFTER_MS: '4000',
    ACQUIRER_RECOVERY_SWEEP_MS: '250',
  },
  'gateway-tokens': { VAULT_KEKS: `k1:${key()}`, VAULT_FINGERPRINT_KEY: key() },
  'webhook-service': {
    WEBHOOK_SECRETS_KEYS: key(),
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_UNIT_MS: '50',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_TIMEOUT_MS: '2000',
  },
};

export interface Stack {
  /** The edge, as merchants reach the platform: every public path of every service. */
  url: string;
  merchant: TestMerchant;
  env: TestEnvironment;
  stop(): Promise<void>;
}

/**
 * The merchant-facing platform as `npm start` runs it, for this run only: each built service as its
 * own process on this run's databases, stream and key buckets, migrated by its own `dist/migrate.js`,
 * and the local edge in front of them all, routing the real route table (deploy/routes.json).
 */
export async function startStack(): Promise<Stack> {
  const mains = SERVICES.map((service) => path.join(ROOT, 'apps', service, 'dist/main.js'));
  const missing = mains.filter((main) => !existsSync(main));
  if (missing.length) throw new Error(`Not built: ${missing.join(', ')}; run "npx turbo run build" first`);

  const env = await TestEnvironment.create();
  const processes: ServiceProcess[] = [];
  let edge: { close(): Promise<void> } | undefined;
  const stop = async () => {
    await edge?.close();
    for (const service of processes) service.child.kill('SIGKILL');
    await Promise.all(processes.map((service) => service.exited()));
    await env.cleanup();
  };
  try {
    const edgeUrl = `http://127.0.0.1:${await freePort()}`;
    const ports = new Map<Service, number>();
    const vars = new Map<Service, Record<string, string>>();
    for (const service of SERVICES) {
      ports.set(service, await freePort());
      vars.set(
        service,
        await env.serviceEnv(service, {
          HTTP_PORT: String(ports.get(service)),
          PUBLIC_BASE_URL: edgeUrl,
          // Orders' checkoutUrl points at the hosted form behind this edge, as npm start's does.
          CHECKOUT_URL: `${edgeUrl}/checkout`,
          ...SERVICE_ENV[service],
        }),
      );
    }
    const table = routeTableOf(ports);
    vars.get('api-docs')!.ROUTE_TABLE = JSON.stringify(table);
    await Promise.all(MIGRATED.map((service) => migrate(service, vars.get(service)!)));
    processes.push(
      ...(await Promise.all(
        SERVICES.map((service, i) => startServiceProcess(mains[i], vars.get(service)!, READY_TIMEOUT_MS)),
      )),
    );
    edge = await startEdge(edgeUrl, table);
    return { url: edgeUrl, merchant: await env.createMerchant('Client Test Shop'), env, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

async function migrate(service: Service, vars: Record<string, string>): Promise<void> {
  const script = path.join(ROOT, 'apps', service, 'dist/migrate.js');
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH, DATABASE_URL: vars.DATABASE_URL, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${service} migrations failed (${code}): ${output}`);
}

interface RouteTable {
  services: Record<string, { port: number }>;
  routes: { prefix: string; service: string }[];
}

/** The real route table (deploy/routes.json), with the ports of the services started here. */
function routeTableOf(ports: Map<Service, number>): RouteTable {
  const table = JSON.parse(readFileSync(path.join(ROOT, 'deploy/routes.json'), 'utf8')) as RouteTable;
  return {
    services: Object.fromEntries([...ports].map(([service, port]) => [service, { port }])),
    routes: table.routes.filter((route) => ports.has(route.service as Service)),
  };
}

/** deploy/local/edge.mjs on `url`, routing `table`. */
async function startEdge(url: string, table: RouteTable): Promise<{ close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'byrd-client-edge-'));
  const routesFile = path.join(dir, 'routes.json');
  writeFileSync(routesFile, JSON.stringify(table));
  const child = spawn(process.execPath, [path.join(ROOT, 'deploy/local/edge.mjs')], {
    env: {
      PATH: process.env.PATH,
      ROUTES_FILE: routesFile,
      EDGE_PORT: new URL(url).port,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the edge did not start: ${output}`)), 15_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('edge listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then(() => reject(new Error(`the edge exited: ${output}`)));
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    close: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
