import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * EndUnpaidPayments looks only at two-step card payments still waiting for their card: index just
 * those. Built CONCURRENTLY (outside a transaction), so a large table keeps taking payments meanwhile;
 * an index left invalid by an interrupted build is dropped and built again.
 */
export class UnpaidTwoStepPayments1765900000100 implements MigrationInterface {
  name = 'UnpaidTwoStepPayments1765900000100';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_unpaid_two_step_idx`);
    await q.query(
      `CREATE INDEX CONCURRENTLY transactions_unpaid_two_step_idx ON transactions (expires_at)
        WHERE status = 'Created' AND payment_method = 'card' AND masked_card_number IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_unpaid_two_step_idx`);
  }
}
