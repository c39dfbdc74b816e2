import 'reflect-metadata';
import { runMigrationCommand } from '@byrd/platform';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from './database.js';

await runMigrationCommand('orders', { entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS });
