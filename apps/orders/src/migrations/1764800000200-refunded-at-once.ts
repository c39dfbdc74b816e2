import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Money that reached an order another payment already held (a late Multibanco or MB WAY payment)
 * is refunded by payments at once; both the payment and that refund are marked, so the order's
 * status and amounts never count them (they are still listed with the order's transactions).
 */
export class RefundedAtOnce1764800000200 implements MigrationInterface {
  name = 'RefundedAtOnce1764800000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE order_transactions ADD COLUMN refunded_at_once boolean NOT NULL DEFAULT false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE order_transactions DROP COLUMN refunded_at_once`);
  }
}
