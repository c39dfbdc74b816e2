import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A shopper pays a Multibanco reference by entity + reference alone, so two pending payments of one
 * merchant must never share them; once settled, a reference may be issued again.
 */
export class AsyncPayments1763800000400 implements MigrationInterface {
  name = 'AsyncPayments1763800000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNIQUE INDEX transactions_pending_multibanco_reference_idx
        ON transactions (merchant_id, (async_details ->> 'entity'), (async_details ->> 'reference'))
        WHERE payment_method = 'multibanco' AND status = 'Processing'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_pending_multibanco_reference_idx`);
  }
}
