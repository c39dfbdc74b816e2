import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The succeeded 3DS verifications of each token: a token is charged once any of them passed, also
 * one a concurrent tokenization of the same card started (the vault keeps only the last one's id).
 */
export class TokenVerifications1765100000100 implements MigrationInterface {
  name = 'TokenVerifications1765100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX transactions_token_verified_idx ON transactions (token_id)
         WHERE operation_type = 'Verification' AND status = 'Success'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_token_verified_idx`);
  }
}
