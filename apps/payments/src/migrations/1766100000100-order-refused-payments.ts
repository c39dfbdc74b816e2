import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A payment its order refused (another attempt held the order's payment lock, or the order closed)
 * is recorded Denied, BYRD205, like one the bank declined; this flag tells the two apart for the
 * hosted form, so its shopper is not told their card was declined. A constant default: no rewrite
 * of the table, old rows read false (their page may then say "declined", as it did).
 */
export class OrderRefusedPayments1766100000100 implements MigrationInterface {
  name = 'OrderRefusedPayments1766100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE transactions ADD COLUMN IF NOT EXISTS refused_by_order boolean NOT NULL DEFAULT false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions DROP COLUMN IF EXISTS refused_by_order`);
  }
}
