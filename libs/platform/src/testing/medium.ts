import { DataSource } from 'typeorm';
import { dataSourceOptions, dropDatabase, type DatabaseOptions } from '../database/data-source.js';
import { createTestDatabase, newRunId, sweepStaleDatabases } from './test-environment.js';

export interface MediumDatabaseOptions extends Omit<DatabaseOptions, 'url' | 'poolSize'> {
  /** Names the database (`byrd_<run>_<service>_medium`), so a leftover says whose it was. */
  service: string;
}

/**
 * The medium test tier (immich's "medium" tests): a fresh real PostgreSQL database with the service's
 * migrations applied, and a TypeORM DataSource on it. No HTTP, no Nest app, no broker: a medium test
 * builds the repositories and use cases it exercises by hand and asserts on what they read and write.
 * Files are named `test/**\/*.medium-spec.ts` and run in the package's `npm test`.
 *
 *   let db: MediumDatabase;
 *   beforeAll(async () => (db = await MediumDatabase.create({ service: 'payments', entities, migrations })));
 *   afterAll(() => db.close());
 */
export class MediumDatabase {
  private constructor(
    readonly url: string,
    readonly dataSource: DataSource,
  ) {}

  static async create(options: MediumDatabaseOptions): Promise<MediumDatabase> {
    await sweepStaleDatabases();
    const url = await createTestDatabase(newRunId(), `${options.service}_medium`);
    const dataSource = new DataSource(dataSourceOptions({ ...options, url, poolSize: 4 }));
    try {
      await dataSource.initialize();
      await dataSource.runMigrations({ transaction: 'each' });
    } catch (error) {
      if (dataSource.isInitialized) await dataSource.destroy();
      await dropDatabase(url);
      throw error;
    }
    return new MediumDatabase(url, dataSource);
  }

  /** Closes the DataSource and drops the database. */
  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await dropDatabase(this.url);
  }
}
