import type { EntityManager } from 'typeorm';

/**
 * Holds, until `manager`'s transaction ends, an advisory lock named `name`: what runs under it with
 * the same name waits its turn, on any replica.
 */
export async function lockInTransaction(manager: EntityManager, name: string): Promise<void> {
  await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [name]);
}
