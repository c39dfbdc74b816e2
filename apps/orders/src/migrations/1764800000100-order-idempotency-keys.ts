import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `idempotency-key` a merchant sent with an order, on the order itself: once the order is
 * committed, a retry with that key answers this order even when the request that created it died
 * before its answer was stored and the key's lease ran out, so the retry never makes a second order.
 */
export class OrderIdempotencyKeys1764800000100 implements MigrationInterface {
  name = 'OrderIdempotencyKeys1764800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders ADD COLUMN idempotency_key text`);
    await q.query(
      `CREATE INDEX orders_idempotency_key_idx ON orders (merchant_id, idempotency_key, created_at)
         WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX orders_idempotency_key_idx`);
    await q.query(`ALTER TABLE orders DROP COLUMN idempotency_key`);
  }
}
