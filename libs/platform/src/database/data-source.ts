import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from 'typeorm';
import { PLATFORM_ENTITIES } from './platform.entities.js';
import { exitOnSignal } from '../process/exit-on-signal.js';
import {
  PlatformHousekeepingIndexes1763900000000,
  PlatformIdempotencyLeases1764700000000,
  PlatformOutboxTraceparent1764800000000,
  PlatformEventFailures1765400000000,
  PlatformOutboxDeleteOnPublish1764000000000,
  PlatformTables1763800000000,
} from './platform.migration.js';

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  /**
   * The longest the database may take (ms): a statement running (PostgreSQL cancels it), a
   * transaction left idle (PostgreSQL ends its session and frees its locks), a wait for a pool
   * connection. A connection silent that long plus ANSWER_GRACE_MS with a statement outstanding is
   * dropped. Unset or 0: no limit (migrations, one-off commands).
   */
  statementTimeoutMs?: number;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: Function[];
}

const connectionLogger = new Logger('Database');

/** How long past the statement timeout a silent connection is still waited for. */
export const ANSWER_GRACE_MS = 5_000;

/** Idle time before TCP keepalive probes start, so a connection whose server vanished is found. */
const KEEPALIVE_DELAY_MS = 10_000;

/**
 * A pool connection that never hangs its caller, and never ends the process when it is lost.
 *
 * - It carries an 'error' listener from birth. A connection the server drops (a restart, a failover,
 *   pg_terminate_backend) while no query runs on it emits 'error'; in the moments between the pool
 *   handing it out and its borrower attaching a listener (or after the borrower removed its own),
 *   nobody listens, and an unhandled 'error' event ends the process. The pool discards such a
 *   connection on release (it is no longer queryable); the next borrower gets a new one.
 * - With a statement timeout, a connection that stays silent for that long plus ANSWER_GRACE_MS
 *   while a statement is outstanding is destroyed: PostgreSQL would have answered, if only with the
 *   timeout's error, so its server is gone without a word (a failover, a partition) and TCP would
 *   take about 15 minutes to say so. The statement fails with a sentence saying so, the pool
 *   discards the connection and opens a new one.
 */
class ResilientClient extends pg.Client {
  private readonly silenceLimitMs: number;
  /** Statements sent and not yet answered (each ends with one ReadyForQuery). */
  private outstanding = 0;
  private watchedStream: Socket | null = null;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const statementTimeout = typeof config === 'object' ? Number(config.statement_timeout ?? 0) : 0;
    this.silenceLimitMs = statementTimeout > 0 ? statementTimeout + ANSWER_GRACE_MS : 0;
    this.on('error', (error: Error) =>
      connectionLogger.warn(`A database connection was lost: ${error.message}`),
    );
    if (this.silenceLimitMs > 0) {
      this.protocol.on('readyForQuery', () => {
        this.outstanding = Math.max(0, this.outstanding - 1);
        if (this.outstanding === 0) this.watchedStream?.setTimeout(0);
      });
    }
  }

  // Every overload of pg's query passes through unchanged; only the count of outstanding ones moves.
  // @ts-expect-error -- one signature standing for all of query's overloads
  override query(...args: unknown[]): unknown {
    if (this.silenceLimitMs > 0) this.expectAnswer();
    return Reflect.apply(super.query, this, args);
  }

  private expectAnswer(): void {
    this.outstanding += 1;
    // The stream is replaced once TLS is negotiated: watch the one in use now.
    const stream = this.protocol.stream;
    if (stream !== this.watchedStream) {
      this.watchedStream = stream;
      stream.on('timeout', () => {
        // Judged after this turn's I/O: a process resumed after a pause runs its expired timers
        // before it reads the answers waiting in its sockets.
        const bytesRead = stream.bytesRead;
        setImmediate(() => {
          if (this.outstanding === 0 || stream.bytesRead !== bytesRead) return;
          stream.destroy(
            new Error(
              `PostgreSQL did not answer within ${this.silenceLimitMs} ms; the connection was dropped`,
            ),
          );
        });
      });
    }
    stream.setTimeout(this.silenceLimitMs);
  }

  /** pg's connection to the server (not in its type definitions): its messages and its socket. */
  private get protocol(): EventEmitter & { stream: Socket } {
    return (this as unknown as { connection: EventEmitter & { stream: Socket } }).connection;
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
      PlatformEventFailures1765400000000,
      ...options.migrations,
    ],
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: options.poolSize ?? 10,
      application_name: 'byrd',
      Client: ResilientClient,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      ...(options.statementTimeoutMs
        ? {
            statement_timeout: options.statementTimeoutMs,
            idle_in_transaction_session_timeout: options.statementTimeoutMs,
            connectionTimeoutMillis: options.statementTimeoutMs,
          }
        : {}),
    },
  };
}

/**
 * Creates the service's database on its server when missing (local stack, tests, first install).
 * It asks the database itself first, and the `postgres` database only when the server answers that
 * it does not exist (3D000): behind PgBouncer or a managed pooler that exposes only the service's
 * database, or with CONNECT on `postgres` revoked, a database created beforehand is all it needs.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Database name "${name}" must be letters, digits and _`);
  const probe = new pg.Client({ connectionString: url });
  try {
    await probe.connect();
    await probe.end();
    return;
  } catch (error) {
    await probe.end().catch(() => {});
    if ((error as { code?: string }).code !== INVALID_CATALOG_NAME) throw error;
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name}"`).catch((error: { code?: string }) => {
        // Created concurrently (two migrators on a fresh install): PostgreSQL answers 42P04 when the
        // other one committed first, 23505 (pg_database_datname_index) when both inserted at once.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
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

/** How long one migration statement waits for a table's locks before it gives up and is tried again. */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;
const MIGRATION_TRIES = 12;
/** How often a migrator waiting for another asks for the migrations' advisory lock again. */
const MIGRATION_LOCK_POLL_MS = 200;

/**
 * The migration command of every service: create the database if needed, then apply migrations.
 *
 * One migrator at a time per database (two pods, a Job run again while the first still works): the
 * others wait on an advisory lock, then find nothing left to do. A statement that would wait for a
 * busy table's locks (the live version holding row locks) gives up after `lockTimeoutMs`, instead
 * of queueing every query of the live version behind it; its migration is rolled back and tried
 * again, up to 12 times, a little later each time.
 */
export async function runMigrations(
  options: DatabaseOptions,
  lockTimeoutMs = MIGRATION_LOCK_TIMEOUT_MS,
): Promise<string[]> {
  await ensureDatabase(options.url);
  const session = new pg.Client({ connectionString: options.url });
  await session.connect();
  try {
    // Asked again rather than waited for in one statement: a statement waiting on the lock holds a
    // snapshot, and the holder's CREATE INDEX CONCURRENTLY waits for every older snapshot of the
    // database (it would wait for this one, which waits for it: no deadlock PostgreSQL can see).
    while (
      !(
        await session.query<{ locked: boolean }>(
          `SELECT pg_try_advisory_lock(hashtext('byrd:migrations')) AS locked`,
        )
      ).rows[0].locked
    )
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
    const base = dataSourceOptions(options);
    const extra = { ...(base.extra as Record<string, unknown>), lock_timeout: lockTimeoutMs };
    const dataSource = new DataSource({ ...base, extra });
    await dataSource.initialize();
    try {
      const done = async (): Promise<string[]> =>
        (await dataSource.query<{ name: string }[]>('SELECT name FROM migrations').catch(() => [])).map(
          (row) => row.name,
        );
      const before = new Set(await done());
      for (let attempt = 1; ; attempt++) {
        try {
          await dataSource.runMigrations({ transaction: 'each' });
          return (await done()).filter((name) => !before.has(name));
        } catch (error) {
          if (attempt >= MIGRATION_TRIES || (error as { code?: string }).code !== LOCK_NOT_AVAILABLE)
            throw error;
          await new Promise((resolve) => setTimeout(resolve, attempt * 500));
        }
      }
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await session.end(); // the advisory lock goes with the session
  }
}

/** SQLSTATE of a statement that gave up waiting for a lock (`lock_timeout`). */
const LOCK_NOT_AVAILABLE = '55P03';
/** The server's "database does not exist". */
const INVALID_CATALOG_NAME = '3D000';

/** A service's migration command: `node dist/migrate.js` with DATABASE_URL set. */
export async function runMigrationCommand(
  serviceName: string,
  options: Omit<DatabaseOptions, 'url'>,
): Promise<void> {
  const url = process.env.DATABASE_URL;
  // Stopped when told to: a transactional migration in progress is rolled back as its connection
  // closes, a concurrent index build left invalid is built again by the next run.
  exitOnSignal(`during the ${serviceName} migration`);
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
