import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The scheduled attempt a claim starts, written before the request goes out: its id (the body's
 * `attemptId`) and start. The attempt's outcome clears them; a claim that finds them still set (the
 * worker died, or lost its database, between the request and its record) records that attempt as
 * one with no outcome, counts it and schedules the next as after any failure. Null on every row
 * until its next claim: nothing to backfill.
 */
export class OpenAttempts1766200000000 implements MigrationInterface {
  name = 'OpenAttempts1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks ADD COLUMN open_attempt_id uuid, ADD COLUMN open_attempt_at timestamptz`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN open_attempt_id, DROP COLUMN open_attempt_at`);
  }
}
