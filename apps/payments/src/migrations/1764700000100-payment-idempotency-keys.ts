import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `idempotency-key` a merchant sent with a card payment, on the payment itself: once its row is
 * committed (write-ahead, before the acquirer is asked), a retry with that key answers this payment
 * even when the request that created it died and the key's lease ran out, so a crash between the
 * acquirer's approval and the answer never turns the merchant's retry into a second charge.
 */
export class PaymentIdempotencyKeys1764700000100 implements MigrationInterface {
  name = 'PaymentIdempotencyKeys1764700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions ADD COLUMN idempotency_key text`);
    await q.query(
      `CREATE INDEX transactions_idempotency_key_idx ON transactions (merchant_id, idempotency_key, created_at)
         WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_idempotency_key_idx`);
    await q.query(`ALTER TABLE transactions DROP COLUMN idempotency_key`);
  }
}
