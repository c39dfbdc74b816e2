import { Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from 'typeorm';
import { PLATFORM_ENTITIES } from './platform.entities.js';
import {
  PlatformHousekeepingIndexes1763900000000,
  PlatformIdempotencyLeases1764700000000,
  PlatformOutboxTraceparent1764800000000,
  PlatformOutboxDeleteOnPublish1764000000000,
  PlatformTables1763800000000,
} from './platform.migration.js';

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: Function[];
}

const connectionLogger = new Logger('Database');

/**
 * Every pool connection carries an 'error' listener from birth. A connection the server drops (a
 * restart, a failover, pg_terminate_backend) while no query runs on it emits 'error'; in the moments
 * between the pool handing it out and its borrower attaching a listener (or after the borrower
 * removed its own), nobody listens, and an unhandled 'error' event ends the process. The pool still
 * discards such a connection on release (it is no longer queryable); the next borrower gets a new one.
 */
class ResilientClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', (error: Error) =>
      connectionLogger.warn(`A database connection was lost: ${error.message}`),
    );
  }
}

/** TypeORM options for a service database: its entities and migrations plus the platform's tables. */
export function dataSourceOptions(options: DatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    entities: [...PLATFORM_ENTITIES, ...(options.entities as unknown[])] as DataSourceOptions['entities'],
    migrations: [
      PlatformTables1763800000000,
      PlatformHousekeepingIndexes1763900000000,
      PlatformOutboxDeleteOnPublish1764000000000,
      PlatformIdempotencyLeases1764700000000,
      PlatformOutboxTraceparent1764800000000,
      ...options.migrations,
    ],
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: { max: options.poolSize ?? 10, application_name: 'byrd', Client: ResilientClient },
  };
}

/** Creates the service's database on its server when missing (local stack, tests, first install). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Database name "${name}" must be letters, digits and _`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name}"`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created concurrently
      });
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** The migration command of every service: create the database if needed, then apply migrations. */
export async function runMigrations(options: DatabaseOptions): Promise<string[]> {
  await ensureDatabase(options.url);
  const dataSource = new DataSource(dataSourceOptions(options));
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

/** A service's migration command: `node dist/migrate.js` with DATABASE_URL set. */
export async function runMigrationCommand(
  serviceName: string,
  options: Omit<DatabaseOptions, 'url'>,
): Promise<void> {
  const url = process.env.DATABASE_URL;
  try {
    if (!url || !/^postgres(ql)?:\/\//.test(url))
      throw new Error('Cannot migrate: DATABASE_URL must be set to a postgres:// URL.');
    const applied = await runMigrations({ ...options, url });
    console.log(
      applied.length
        ? `${serviceName}: applied ${applied.join(', ')}`
        : `${serviceName}: database is up to date`,
    );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
