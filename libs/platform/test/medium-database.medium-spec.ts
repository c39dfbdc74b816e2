import pg from 'pg';
import { MediumDatabase } from '@byrd/platform/testing';

/** The medium tier's own promise: a fresh migrated database per test file, gone after close. */
describe('MediumDatabase', () => {
  const databaseExists = async (url: string): Promise<boolean> => {
    const admin = new URL(url);
    const name = admin.pathname.slice(1);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      return found.rowCount === 1;
    } finally {
      await client.end();
    }
  };

  it('gives each caller its own database with the migrations applied, and drops it on close', async () => {
    const first = await MediumDatabase.create({ service: 'platform', entities: [], migrations: [] });
    const second = await MediumDatabase.create({ service: 'platform', entities: [], migrations: [] });
    try {
      expect(first.url).not.toBe(second.url);
      const applied = await first.dataSource.query<{ name: string }[]>('SELECT name FROM migrations');
      expect(applied.map((m) => m.name)).toContain('PlatformTables1763800000000');
      await first.dataSource.query(
        `INSERT INTO inbox (event_id, consumer, subject) VALUES (gen_random_uuid(), 'medium', 'order.paid')`,
      );
      const [{ count }] = await second.dataSource.query<{ count: string }[]>('SELECT count(*) FROM inbox');
      expect(Number(count)).toBe(0);
    } finally {
      await first.close();
      await second.close();
    }
    expect(await databaseExists(first.url)).toBe(false);
    expect(await databaseExists(second.url)).toBe(false);
  });
});
