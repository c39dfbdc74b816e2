import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Write-ahead acquirer calls. `acquirer_pending_since` is set, and committed, before a payment,
 * capture, refund or release is sent to the acquirer, and cleared when its answer is recorded: a row
 * that keeps it past the recovery delay was cut off (crash, timeout, unknown outcome) and the recovery
 * worker settles it by asking the acquirer under the transaction id. The sandbox acquirer's own
 * ledger (what it authorised, by that id) lives in its table here, written apart from ours, as a
 * real acquirer's would be.
 */
export class WriteAhead1764500000200 implements MigrationInterface {
  name = 'WriteAhead1764500000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions ADD COLUMN acquirer_pending_since timestamptz`);
    await q.query(
      `CREATE INDEX transactions_acquirer_pending_idx ON transactions (acquirer_pending_since)
         WHERE acquirer_pending_since IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE sandbox_acquirer_ledger (
        reference uuid PRIMARY KEY,
        operation text NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('Success', 'Denied', 'Error')),
        iso_amount bigint NOT NULL,
        currency char(3) NOT NULL,
        voided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_acquirer_ledger`);
    await q.query(`DROP INDEX transactions_acquirer_pending_idx`);
    await q.query(`ALTER TABLE transactions DROP COLUMN acquirer_pending_since`);
  }
}
