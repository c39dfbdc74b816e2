import type { QueryRunner } from 'typeorm';

/**
 * Builds an index without blocking the table's writes, in a migration with `transaction = false`:
 * `CREATE INDEX CONCURRENTLY ${name} ${definition}` (definition: `ON table (columns) [WHERE ...]`).
 *
 * - A valid index of that name is kept: a migration re-run after a kill between its build and its
 *   record does not throw a finished build away.
 * - An index a build left invalid (killed, canceled) is dropped and built again.
 * - The build waits for every older transaction however long that takes: the migrator's lock timeout
 *   (which keeps a DDL statement from queueing live queries behind it) would cancel it behind any
 *   transaction open longer, and a concurrent build queues no live query.
 */
export async function createIndexConcurrently(
  q: QueryRunner,
  name: string,
  definition: string,
): Promise<void> {
  await withoutLockTimeout(q, async () => {
    const [existing] = (await q.query(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
      [name],
    )) as { valid: boolean }[];
    if (existing?.valid) return;
    if (existing) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await q.query(`CREATE INDEX CONCURRENTLY ${name} ${definition}`);
  });
}

/** Drops an index without blocking the table's writes, waiting as long as `createIndexConcurrently`. */
export async function dropIndexConcurrently(q: QueryRunner, name: string): Promise<void> {
  await withoutLockTimeout(q, () => q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`));
}

async function withoutLockTimeout(q: QueryRunner, work: () => Promise<unknown>): Promise<void> {
  await q.query(`SET lock_timeout = 0`);
  try {
    await work();
  } finally {
    await q.query(`RESET lock_timeout`);
  }
}
