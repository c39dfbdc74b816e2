import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A known card tokenized again (a renewed expiry, a new alias) is staged beside the token's card
 * under the new request's verification, and becomes the token's only once that verification
 * succeeded: a refused, abandoned or crashed re-tokenization leaves a verified token as it was. The
 * staged card is sealed under the token's own data key, so a KEK rotation re-wraps it with the rest.
 * NOT VALID: every row there is has none staged, and checking it would scan the vault under lock.
 */
export class StagedCardRefresh1766100000000 implements MigrationInterface {
  name = 'StagedCardRefresh1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE card_tokens
        ADD COLUMN staged_verification_id uuid,
        ADD COLUMN staged_card_ciphertext bytea,
        ADD COLUMN staged_expiration text,
        ADD COLUMN staged_expires_at timestamptz,
        ADD COLUMN staged_alias text,
        ADD COLUMN staged_transaction_mode text,
        ADD CONSTRAINT card_tokens_staged_whole CHECK (
          (staged_verification_id IS NULL) = (staged_card_ciphertext IS NULL)
          AND (staged_verification_id IS NULL) = (staged_expiration IS NULL)
          AND (staged_verification_id IS NULL) = (staged_expires_at IS NULL)) NOT VALID`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE card_tokens
        DROP CONSTRAINT card_tokens_staged_whole,
        DROP COLUMN staged_verification_id,
        DROP COLUMN staged_card_ciphertext,
        DROP COLUMN staged_expiration,
        DROP COLUMN staged_expires_at,
        DROP COLUMN staged_alias,
        DROP COLUMN staged_transaction_mode`);
  }
}
