import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The stored answers that name a token (its create answers kept under idempotency-keys), by
 * merchant and token: deleting a token erases them in its own transaction with one index look-up,
 * not a read of every answer the merchant's keys stored that day.
 */
export class TokenAnswersIndex1765300000200 implements MigrationInterface {
  name = 'TokenAnswersIndex1765300000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX idempotency_keys_token_answer_idx
         ON idempotency_keys (merchant_id, (response_body ->> 'tokenId'))
         WHERE response_body ? 'tokenId'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX idempotency_keys_token_answer_idx`);
  }
}
