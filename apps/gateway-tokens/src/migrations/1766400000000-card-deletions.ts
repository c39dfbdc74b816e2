import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a merchant last deleted a card (`DELETE /api/v2/tokens/{id}`), by its customer reference and
 * fingerprint, for a day: a "save my card" of a payment made before that delete (payments saving it
 * late: its first answer lost, the vault away) is refused instead of bringing the card back. No card
 * data: the fingerprint is the keyed hash the tokens already carry.
 */
export class CardDeletions1766400000000 implements MigrationInterface {
  name = 'CardDeletions1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE card_deletions (
        merchant_id text NOT NULL,
        custom_reference text NOT NULL,
        fingerprint bytea NOT NULL,
        deleted_at timestamptz NOT NULL,
        PRIMARY KEY (merchant_id, custom_reference, fingerprint)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE card_deletions`);
  }
}
