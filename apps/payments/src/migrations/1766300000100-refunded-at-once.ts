import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A payment whose money arrived after it had ended (an MB WAY request or Multibanco reference we
 * voided or failed, or one of an order paid another way) is recorded Success and refunded at once;
 * this flag says so, so a retry with the payment's idempotency-key is tried anew instead of being
 * answered "Success" for money handed back. A constant default: no rewrite of the table, old rows
 * read false (a retry within a day of a payment refunded at once before this is answered as before:
 * not backfilled, which would read the whole table at deploy for a day's worth of such retries).
 */
export class RefundedAtOnce1766300000100 implements MigrationInterface {
  name = 'RefundedAtOnce1766300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE transactions ADD COLUMN IF NOT EXISTS refunded_at_once boolean NOT NULL DEFAULT false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions DROP COLUMN IF EXISTS refunded_at_once`);
  }
}
