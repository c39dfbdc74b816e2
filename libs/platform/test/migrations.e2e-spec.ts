import { createServer, connect, type Server } from 'node:net';
import pg from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropDatabase, ensureDatabase, runMigrations } from '@byrd/platform';
import { createTestDatabase, newRunId, PrivatePostgresServer } from '@byrd/platform/testing';
import { TcpRelay } from './tcp-relay.js';

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

/** An index built without blocking writes, as the migrations of large tables build theirs. */
class IndexOutbox1900000000001 implements MigrationInterface {
  name = 'IndexOutbox1900000000001';
  transaction = false;
  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, 'outbox_created_test_idx', 'ON outbox (created_at)');
  }
  async down(): Promise<void> {}
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

  it('creates a missing database when two migrators start at once on a fresh install', async () => {
    // Both find it missing and both CREATE DATABASE: the loser gets 42P04 or, when both inserted
    // at once, 23505 (pg_database_datname_index). Either means it exists now.
    for (let round = 0; round < 10; round++) {
      const fresh = new URL(url);
      fresh.pathname = `${fresh.pathname}_fresh${round}`;
      try {
        await Promise.all([ensureDatabase(fresh.toString()), ensureDatabase(fresh.toString())]);
        const client = new pg.Client({ connectionString: fresh.toString() });
        await client.connect();
        await client.end();
      } finally {
        await dropDatabase(fresh.toString());
      }
    }
  });

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

  describe('an index built concurrently', () => {
    const indexed = () => ({ url, entities: [], migrations: [IndexOutbox1900000000001] });
    async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, params)).rows as T[];
      } finally {
        await client.end();
      }
    }
    const index = async () =>
      (
        await sql<{ oid: number; valid: boolean }>(
          `SELECT c.oid::int AS oid, i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
            WHERE c.relname = 'outbox_created_test_idx'`,
        )
      )[0];

    it('keeps a valid index when its migration runs again (killed before its record), and builds again one left invalid', async () => {
      await runMigrations({ url, entities: [], migrations: [] });
      await sql(`CREATE INDEX outbox_created_test_idx ON outbox (created_at)`); // built, not recorded
      const built = await index();
      expect(await runMigrations(indexed())).toEqual(['IndexOutbox1900000000001']);
      expect(await index()).toEqual(built);

      // A build canceled half-way leaves its index invalid: the next run builds it again.
      await sql(`DELETE FROM migrations WHERE name = 'IndexOutbox1900000000001'`);
      await sql(
        `UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'outbox_created_test_idx'::regclass`,
      );
      expect(await runMigrations(indexed())).toEqual(['IndexOutbox1900000000001']);
      const rebuilt = await index();
      expect(rebuilt.valid).toBe(true);
      expect(rebuilt.oid).not.toBe(built.oid);
    });

    it('is built while a second migrator waits for the first (its wait holds no snapshot the build waits for)', async () => {
      await runMigrations({ url, entities: [], migrations: [] });
      const runs = await Promise.all([runMigrations(indexed()), runMigrations(indexed())]);
      expect(runs.flat()).toEqual(['IndexOutbox1900000000001']);
      expect((await index()).valid).toBe(true);
    }, 20_000);

    it('waits for a transaction older than the build however long it lasts, beyond the migration lock timeout', async () => {
      await runMigrations({ url, entities: [], migrations: [] });
      const live = new pg.Client({ connectionString: url });
      await live.connect();
      await live.query(`BEGIN; LOCK TABLE outbox IN ROW EXCLUSIVE MODE`); // a writer's open transaction
      const released = new Promise((resolve) => setTimeout(resolve, 1_500)).then(() => live.query('COMMIT'));
      // As the migrator runs it: a 200 ms lock timeout on its session.
      const session = new pg.Client({ connectionString: url, lock_timeout: 200 });
      await session.connect();
      const runner = {
        query: (text: string, params?: unknown[]) => session.query(text, params).then((r) => r.rows),
      };
      try {
        const started = Date.now();
        await createIndexConcurrently(
          runner as unknown as QueryRunner,
          'outbox_created_test_idx',
          'ON outbox (created_at)',
        );
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
        expect((await index()).valid).toBe(true);
        // Its own lock timeout is back for what the migration does next.
        expect((await session.query(`SHOW lock_timeout`)).rows[0].lock_timeout).toBe('200ms');
      } finally {
        await released;
        await live.end();
        await session.end();
      }
    });
  });
});

/**
 * A connection pooler in front of PostgreSQL that exposes only some databases, as PgBouncer's
 * `[databases]` section or a managed pooler does: a startup message naming another database is
 * answered as PgBouncer answers it (FATAL "no such database"); the others are relayed to the server.
 */
class PoolerRelay extends TcpRelay {
  readonly refused: string[] = [];
  private constructor(server: Server) {
    super(server);
  }

  static async start(target: URL, exposed: readonly string[]): Promise<PoolerRelay> {
    const server = createServer();
    const relay = new PoolerRelay(server);
    server.on('connection', (client) => {
      relay.sockets.add(client);
      let startup = Buffer.alloc(0);
      const onStartup = (chunk: Buffer) => {
        startup = Buffer.concat([startup, chunk]);
        if (startup.length < 4 || startup.length < startup.readInt32BE(0)) return;
        client.off('data', onStartup);
        // Int32 length, Int32 protocol, then name\0value\0 pairs.
        const fields = startup.subarray(8, startup.readInt32BE(0)).toString('utf8').split('\0');
        const params = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i]) params.set(fields[i], fields[i + 1]);
        const database = params.get('database') ?? params.get('user') ?? '';
        if (!exposed.includes(database)) {
          relay.refused.push(database);
          client.end(errorResponse('08P01', `no such database: ${database}`));
          return;
        }
        const upstream = connect(Number(target.port || 5432), target.hostname);
        relay.sockets.add(upstream);
        upstream.write(startup);
        client.on('data', (data) => upstream.write(data));
        upstream.on('data', (data) => client.write(data));
        for (const [from, to] of [
          [client, upstream],
          [upstream, client],
        ] as const) {
          from.on('close', () => to.destroy());
          from.on('error', () => to.destroy());
        }
      };
      client.on('data', onStartup);
      client.on('error', () => client.destroy());
    });
    await TcpRelay.listening(server);
    return relay;
  }
}

/** A FATAL ErrorResponse message of the PostgreSQL protocol. */
function errorResponse(code: string, message: string): Buffer {
  const body = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/**
 * The migrations Job (the chart's pre-upgrade hook) behind PgBouncer or a managed pooler that
 * exposes only the service's database, created beforehand as README says: nothing reaches the
 * `postgres` database there (the same holds where CONNECT on it is revoked).
 */
describe('runMigrations behind a pooler exposing only the service database', () => {
  const runId = newRunId();
  let url: string;
  let pooler: PoolerRelay;
  beforeEach(async () => {
    url = await createTestDatabase(runId, `pooled_${Math.random().toString(36).slice(2, 8)}`);
    pooler = await PoolerRelay.start(new URL(url), [new URL(url).pathname.slice(1)]);
  });
  afterEach(async () => {
    await pooler.close();
    await dropDatabase(url);
  });

  it('migrates a database created beforehand without asking for the postgres database', async () => {
    const applied = await runMigrations({ url: pooler.url(url), entities: [], migrations: [] });
    expect(applied.length).toBeGreaterThan(0);
    expect(pooler.refused).toEqual([]);
  });

  it('still creates a missing database through the postgres database where the server has it', async () => {
    const missing = new URL(url);
    missing.pathname = `${missing.pathname}_new`;
    try {
      await runMigrations({ url: missing.toString(), entities: [], migrations: [] });
      const client = new pg.Client({ connectionString: missing.toString() });
      await client.connect();
      await client.end();
    } finally {
      await dropDatabase(missing.toString());
    }
  });
});

/**
 * The same where CONNECT on the `postgres` database is revoked (a managed server, a hardened one):
 * the service's role may connect to its own database, created beforehand, and nowhere else. On a
 * server of the test's own: the revoke concerns every role of the server.
 */
describe('runMigrations with CONNECT on the postgres database revoked', () => {
  let server: PrivatePostgresServer;
  beforeAll(async () => {
    server = await PrivatePostgresServer.start();
    const admin = new pg.Client({ connectionString: server.url('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE service LOGIN`);
      await admin.query(`CREATE DATABASE service_db OWNER service`);
      await admin.query(`REVOKE CONNECT ON DATABASE postgres FROM PUBLIC`);
    } finally {
      await admin.end();
    }
  }, 60_000);
  afterAll(() => server?.remove());

  it("migrates the role's own database, created beforehand", async () => {
    // The role cannot reach postgres: what the old code asked first.
    const probe = new pg.Client({ connectionString: server.url('postgres', 'service') });
    await expect(probe.connect()).rejects.toMatchObject({ code: '42501' });
    await probe.end().catch(() => {});

    const applied = await runMigrations({
      url: server.url('service_db', 'service'),
      entities: [],
      migrations: [],
    });
    expect(applied.length).toBeGreaterThan(0);
  });
});
