import 'reflect-metadata';
import { runMigrationCommand } from '@byrd/platform';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from './database.js';

await runMigrationCommand('webhook-service', { entities: WEBHOOK_ENTITIES, migrations: WEBHOOK_MIGRATIONS });
