import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hosted form's "save my card": a payment remembers that its shopper asked (under the order's
 * `tokenOptions.customReference`) and, once it succeeded, the vault token the card was saved as.
 */
export class SavedCards1764400000100 implements MigrationInterface {
  name = 'SavedCards1764400000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions ADD COLUMN save_card_reference text`);
    await q.query(`ALTER TABLE transactions ADD COLUMN saved_token_id uuid`);
    await q.query(
      `ALTER TABLE transactions ADD CONSTRAINT transactions_saved_token_check
         CHECK (saved_token_id IS NULL OR save_card_reference IS NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE transactions DROP CONSTRAINT transactions_saved_token_check`);
    await q.query(`ALTER TABLE transactions DROP COLUMN saved_token_id`);
    await q.query(`ALTER TABLE transactions DROP COLUMN save_card_reference`);
  }
}
