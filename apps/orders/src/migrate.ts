import 'reflect-metadata';
import { z } from 'zod';
import { ConfigError, baseConfigSchema, loadConfig, runMigrations } from '@byrd/platform';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from './database.js';

try {
  const { DATABASE_URL } = loadConfig(z.object({ DATABASE_URL: baseConfigSchema.shape.DATABASE_URL }));
  const applied = await runMigrations({
    url: DATABASE_URL,
    entities: ORDERS_ENTITIES,
    migrations: ORDERS_MIGRATIONS,
  });
  console.log(applied.length ? `orders: applied ${applied.join(', ')}` : 'orders: database is up to date');
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
