import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * EndUnpaidPayments looks only at two-step card payments still waiting for their card: index just
 * those. Built CONCURRENTLY (outside a transaction), so a large table keeps taking payments meanwhile;
 * an index left invalid by an interrupted build is dropped and built again.
 */
export class UnpaidTwoStepPayments1765900000100 implements MigrationInterface {
  name = 'UnpaidTwoStepPayments1765900000100';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      q,
      'transactions_unpaid_two_step_idx',
      `ON transactions (expires_at) WHERE status = 'Created' AND payment_method = 'card' AND masked_card_number IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, 'transactions_unpaid_two_step_idx');
  }
}
