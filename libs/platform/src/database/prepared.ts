import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

const statementNames = new Map<string, string>();

function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `byrd_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * Runs a hot statement as a named prepared statement on the data source's pool: PostgreSQL parses
 * and plans it once per connection instead of on every call, which for the large CTEs of a request
 * path is a good part of the database's work. For statements whose text is one of a few fixed
 * shapes (each shape is kept, on every connection); not for SQL built from varying values.
 */
export async function queryPrepared<R extends QueryResultRow = QueryResultRow>(
  dataSource: DataSource,
  sql: string,
  values: unknown[],
): Promise<R[]> {
  return (await poolOf(dataSource).query<R>({ name: statementName(sql), text: sql, values })).rows;
}

/**
 * Runs a statement unprepared, on the data source's pool: PostgreSQL plans it for these values and
 * the table as it is now. For a statement whose best plan depends on its input's size (a batch
 * joined to a table by `= ANY` of an array), where a prepared statement's cached generic plan, made
 * while the table was small, would keep scanning the whole table once it has grown.
 */
export async function queryReplanned<R extends QueryResultRow = QueryResultRow>(
  dataSource: DataSource,
  sql: string,
  values: unknown[],
): Promise<R[]> {
  return (await poolOf(dataSource).query<R>(sql, values)).rows;
}

/** The pg pool under a TypeORM data source: plain queries without TypeORM's per-query work. */
function poolOf(dataSource: DataSource): Pool {
  return (dataSource.driver as PostgresDriver).master as Pool;
}

/** What `onOwnConnection` gives its work: the client, and whether the connection is lost. */
export interface OwnConnection {
  client: PoolClient;
  /** Set when the connection failed (or the work gave it up): it is closed, not pooled again. */
  lost?: Error;
}

/**
 * Runs `work` on a pool connection of its own, released afterwards. A checked-out client has no
 * listener of the pool's: the connection dropping meanwhile (a database restart, a failover) would
 * be an unhandled 'error' event and end the process. It is kept in `lost` instead, and a lost
 * connection is destroyed, not returned.
 */
export async function onOwnConnection<T>(
  dataSource: DataSource,
  work: (connection: OwnConnection) => Promise<T>,
): Promise<T> {
  const connection: OwnConnection = { client: await poolOf(dataSource).connect() };
  const onError = (error: Error) => (connection.lost = error);
  connection.client.on('error', onError);
  try {
    return await work(connection);
  } finally {
    connection.client.removeListener('error', onError);
    connection.client.release(connection.lost);
  }
}

/**
 * Runs `work` while this process holds the advisory lock of `key` (session-level, on a connection of
 * its own), or answers `undefined` at once, running nothing, when another session holds it. For
 * work on one row that calls out between its database statements (a recovery asking the acquirer),
 * which two replicas must never do at once; the lock goes with the connection when the process dies.
 */
export function whileHoldingLock<T>(
  dataSource: DataSource,
  key: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  return onOwnConnection(dataSource, async (session) => {
    const { rows } = await session.client.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked`,
      [key],
    );
    if (!rows[0].locked) return undefined;
    try {
      return await work();
    } finally {
      // A session whose unlock failed is closed, not pooled: the lock goes with it.
      if (!session.lost)
        await session.client
          .query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [key])
          .catch((error: Error) => (session.lost = error));
    }
  });
}
