import pg from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dropDatabase, runMigrations } from '@byrd/platform';
import { createTestDatabase, newRunId } from '@byrd/platform/testing';

/** A migration of a table the live version keeps busy: it needs that table's exclusive lock. */
class AddColumnToOutbox1900000000000 implements MigrationInterface {
  name = 'AddColumnToOutbox1900000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN migrated_by_test int`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN migrated_by_test`);
  }
}

/** `runMigrations` as the Helm Job and every replica's start run it: more than one at once, on a live database. */
describe('runMigrations', () => {
  const runId = newRunId();
  let url: string;
  beforeEach(async () => {
    url = await createTestDatabase(runId, `migrate_${Math.random().toString(36).slice(2, 8)}`);
  });
  afterEach(() => dropDatabase(url));

  const options = () => ({ url, entities: [], migrations: [AddColumnToOutbox1900000000000] });

  it('applies each migration once when several migrators start at once', async () => {
    const runs = await Promise.all([
      runMigrations(options()),
      runMigrations(options()),
      runMigrations(options()),
    ]);
    // One of them did the work; the others waited for it and found nothing left.
    expect(runs.filter((applied) => applied.length > 0)).toHaveLength(1);
    expect(runs.flat()).toContain('AddColumnToOutbox1900000000000');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT name, count(*)::int AS n FROM migrations GROUP BY name`);
      expect(rows.every((row) => row.n === 1)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('gives up waiting behind a busy table, and tries again until it is free', async () => {
    await runMigrations({ url, entities: [], migrations: [] });
    // The live version holds the table (a relay's open transaction on it) for 1.5 s.
    const live = new pg.Client({ connectionString: url });
    await live.connect();
    await live.query(`BEGIN; SELECT count(*) FROM outbox`);
    const released = new Promise((resolve) => setTimeout(resolve, 1_500)).then(() => live.query('COMMIT'));
    // Meanwhile another session's query of the table is not queued behind the waiting migration.
    const migrated = runMigrations(options(), 200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    try {
      const started = Date.now();
      await reader.query(`SELECT count(*) FROM outbox`);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await reader.end();
    }
    expect(await migrated).toEqual(['AddColumnToOutbox1900000000000']);
    await released;
    await live.end();
  });
});
