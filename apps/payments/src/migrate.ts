import 'reflect-metadata';
import { runMigrationCommand } from '@byrd/platform';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from './database.js';

await runMigrationCommand('payments', { entities: PAYMENTS_ENTITIES, migrations: PAYMENTS_MIGRATIONS });
