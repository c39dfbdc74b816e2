import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The vault's card verifications are zero-amount transactions of their own (`Verification`). */
export class CardVerifications1764300000100 implements MigrationInterface {
  name = 'CardVerifications1764300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions DROP CONSTRAINT transactions_iso_amount_check`);
    await q.query(
      `ALTER TABLE transactions ADD CONSTRAINT transactions_iso_amount_check
         CHECK (iso_amount > 0 OR (operation_type = 'Verification' AND iso_amount = 0))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM three_ds_sessions WHERE transaction_id IN
                     (SELECT id FROM transactions WHERE operation_type = 'Verification')`);
    await q.query(`DELETE FROM transactions WHERE operation_type = 'Verification'`);
    await q.query(`ALTER TABLE transactions DROP CONSTRAINT transactions_iso_amount_check`);
    await q.query(
      `ALTER TABLE transactions ADD CONSTRAINT transactions_iso_amount_check CHECK (iso_amount > 0)`,
    );
  }
}
