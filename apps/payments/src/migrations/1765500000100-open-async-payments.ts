import type { MigrationInterface, QueryRunner } from 'typeorm';

/** EndLapsedAttempts looks only at async payments still waiting for the shopper: index just those. */
export class OpenAsyncPayments1765500000100 implements MigrationInterface {
  name = 'OpenAsyncPayments1765500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX transactions_open_async_idx ON transactions (expires_at)
        WHERE status = 'Processing' AND payment_method IN ('multibanco', 'mbway')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_open_async_idx`);
  }
}
