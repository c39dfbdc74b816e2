import { Reflector } from '@nestjs/core';
import pg from 'pg';
import { IdempotencyGuard, type BaseConfig } from '@byrd/platform';
import { MediumDatabase } from '@byrd/platform/testing';

/** Keys past their retention, more than one statement removes inside the statement timeout. */
const EXPIRED = 400_000;

/** The hourly purge of idempotency-keys past their 24 h, on a real PostgreSQL. */
describe('idempotency-key purge (medium)', () => {
  let db: MediumDatabase;

  beforeAll(async () => {
    // One statement over the whole backlog takes many seconds on the test machines; one batch of
    // the purge 100-250 ms on the slow kind (at 250 ms the test failed one run in three there).
    db = await MediumDatabase.create({
      service: 'platform',
      entities: [],
      migrations: [],
      statementTimeoutMs: 1_000,
    });
  });
  afterAll(() => db?.close());

  it('removes every expired key however many, in short statements, and keeps the live ones', async () => {
    const setup = new pg.Client({ connectionString: db.url });
    await setup.connect();
    try {
      await setup.query(
        `INSERT INTO idempotency_keys (merchant_id, key, request_hash, response_status, response_body, created_at)
         SELECT 'merchant-' || (g % 50), 'expired-' || g, 'hash', 201, '{"ok":true}',
                now() - interval '25 hours' - g * interval '1 millisecond'
           FROM generate_series(1, $1::int) g`,
        [EXPIRED],
      );
      await setup.query(
        `INSERT INTO idempotency_keys (merchant_id, key, request_hash, created_at)
         SELECT 'merchant-1', 'live-' || g, 'hash', now() - interval '23 hours' FROM generate_series(1, 10) g`,
      );
      await setup.query('ANALYZE idempotency_keys');
    } finally {
      await setup.end();
    }
    const guard = new IdempotencyGuard(db.dataSource, new Reflector(), {
      IDEMPOTENCY_LEASE_MS: 15_000,
    } as BaseConfig);

    expect(await guard.purgeExpired()).toBe(EXPIRED);
    const left = await db.dataSource.query<{ key: string }[]>(
      `SELECT key FROM idempotency_keys ORDER BY key`,
    );
    expect(left.map((row) => row.key)).toEqual(Array.from({ length: 10 }, (_, i) => `live-${i + 1}`).sort());
  });
});
