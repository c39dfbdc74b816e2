import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The idempotency-key of the `/pay` request that gave a two-step payment its card: a retry of that
 * request, whose first answer was lost, is answered with the payment as it stands.
 */
export class PayIdempotencyKeys1765200000100 implements MigrationInterface {
  name = 'PayIdempotencyKeys1765200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions ADD COLUMN pay_idempotency_key text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions DROP COLUMN pay_idempotency_key`);
  }
}
