import 'reflect-metadata';
import { runMigrationCommand } from '@byrd/platform';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from './database.js';

await runMigrationCommand('gateway-tokens', { entities: TOKENS_ENTITIES, migrations: TOKENS_MIGRATIONS });
