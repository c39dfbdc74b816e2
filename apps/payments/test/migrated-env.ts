import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '@byrd/orders';
import {
  freePort,
  startServiceProcess,
  type ServiceProcess,
  type TestEnvironment,
} from '@byrd/platform/testing';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '../src/database.js';

const SCHEMAS = {
  orders: { entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS },
  payments: { entities: PAYMENTS_ENTITIES, migrations: PAYMENTS_MIGRATIONS },
};

/**
 * A service's variables in this test run (`TestEnvironment.serviceEnv`), its database migrated: a
 * copy of a template migrated once for these migrations, not every test file's database again.
 */
export async function migratedServiceEnv(
  env: TestEnvironment,
  service: keyof typeof SCHEMAS,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  return env.serviceEnv(service, extra, SCHEMAS[service]);
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const PAYMENTS_MAIN = path.resolve(here, '../dist/main.js');
export const ORDERS_MAIN = path.resolve(here, '../../orders/dist/main.js');

export interface OrdersAndPayments {
  orders: ServiceProcess;
  /** One process per replica asked for, on the same database. */
  payments: ServiceProcess[];
  ordersVars: Record<string, string>;
  /** Without HTTP_PORT (each replica has its own): add one to start another replica. */
  paymentsVars: Record<string, string>;
}

/**
 * Orders and payments as they run in production (`node dist/main.js`, built first) on this run's
 * migrated databases, each on a free port: what the kill -9 and card-data tests start.
 */
export async function startOrdersAndPayments(
  env: TestEnvironment,
  { orders = {}, payments = {}, paymentReplicas = 1 }: {
    orders?: Record<string, string>;
    payments?: Record<string, string>;
    paymentReplicas?: number;
  } = {},
): Promise<OrdersAndPayments> {
  for (const main of [PAYMENTS_MAIN, ORDERS_MAIN]) {
    if (!existsSync(main)) throw new Error(`${main} is missing: run "npx turbo run build" first`);
  }
  const ordersPort = String(await freePort());
  const [ordersVars, paymentsVars] = await Promise.all([
    migratedServiceEnv(env, 'orders', { HTTP_PORT: ordersPort, ...orders }),
    migratedServiceEnv(env, 'payments', payments),
  ]);
  const ports = await Promise.all(Array.from({ length: paymentReplicas }, () => freePort()));
  const [ordersProcess, ...replicas] = await Promise.all([
    startServiceProcess(ORDERS_MAIN, ordersVars),
    ...ports.map((port) => startServiceProcess(PAYMENTS_MAIN, { ...paymentsVars, HTTP_PORT: String(port) })),
  ]);
  return { orders: ordersProcess, payments: replicas, ordersVars, paymentsVars };
}
