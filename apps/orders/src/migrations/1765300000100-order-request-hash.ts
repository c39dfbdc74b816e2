import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A hash of the request that created an order with an `idempotency-key`: a retry after that
 * request's answer was lost is compared with all of it, as the key's stored answer would compare it
 * (an order before this column is compared by amount, currency and reference, as before).
 */
export class OrderRequestHash1765300000100 implements MigrationInterface {
  name = 'OrderRequestHash1765300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders ADD COLUMN request_hash text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders DROP COLUMN request_hash`);
  }
}
