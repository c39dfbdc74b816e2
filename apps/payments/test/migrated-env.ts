import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '@byrd/orders';
import { runMigrations } from '@byrd/platform';
import type { TestEnvironment } from '@byrd/platform/testing';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '../src/database.js';

const SCHEMAS = {
  orders: { entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS },
  payments: { entities: PAYMENTS_ENTITIES, migrations: PAYMENTS_MIGRATIONS },
};

/** A service's variables in this test run (`TestEnvironment.serviceEnv`), its database migrated. */
export async function migratedServiceEnv(
  env: TestEnvironment,
  service: keyof typeof SCHEMAS,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  const vars = await env.serviceEnv(service, extra);
  await runMigrations({ url: vars.DATABASE_URL, ...SCHEMAS[service] });
  return vars;
}
