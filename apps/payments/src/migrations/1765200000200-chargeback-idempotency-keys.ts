import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The idempotency-keys of the requests that opened and last moved each chargeback: a retry whose
 * first answer was lost is answered with the chargeback as it stands, never a second one.
 */
export class ChargebackIdempotencyKeys1765200000200 implements MigrationInterface {
  name = 'ChargebackIdempotencyKeys1765200000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE chargebacks ADD COLUMN idempotency_key text, ADD COLUMN move_idempotency_key text`,
    );
    await q.query(
      `CREATE INDEX chargebacks_idempotency_key_idx ON chargebacks (merchant_id, idempotency_key, created_at)
         WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX chargebacks_idempotency_key_idx`);
    await q.query(`ALTER TABLE chargebacks DROP COLUMN idempotency_key, DROP COLUMN move_idempotency_key`);
  }
}
