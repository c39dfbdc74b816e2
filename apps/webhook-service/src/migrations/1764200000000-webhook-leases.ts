import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A claim writes its lease to `lease_until`, a column no index covers, instead of moving the
 * indexed `next_attempt_at`: PostgreSQL can then update the row in place (a HOT update, helped by
 * the free space fillfactor leaves on each page) without touching the table's five indexes, so a
 * delivery costs one index-maintaining update (its outcome) instead of two.
 */
export class WebhookLeases1764200000000 implements MigrationInterface {
  name = 'WebhookLeases1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN lease_until timestamptz`);
    await q.query(`ALTER TABLE webhooks SET (fillfactor = 80)`);
    // Rows leased the old way keep their lease: it ends when next_attempt_at comes.
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks RESET (fillfactor)`);
    await q.query(
      `UPDATE webhooks SET next_attempt_at = greatest(next_attempt_at, lease_until) WHERE lease_until IS NOT NULL`,
    );
    await q.query(`ALTER TABLE webhooks DROP COLUMN lease_until`);
  }
}
