import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The 3DS expiry sweep looks only at open sessions: index just those. */
export class ThreeDSOpenSessions1763900000500 implements MigrationInterface {
  name = 'ThreeDSOpenSessions1763900000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX three_ds_sessions_open_idx ON three_ds_sessions (expires_at) WHERE status = 'Created'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX three_ds_sessions_open_idx`);
  }
}
