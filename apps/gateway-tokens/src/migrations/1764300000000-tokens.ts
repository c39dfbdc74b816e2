import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Tokens1764300000000 implements MigrationInterface {
  name = 'Tokens1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE card_tokens (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        custom_reference text,
        alias text,
        brand text NOT NULL,
        masked_number text NOT NULL,
        expiration text NOT NULL,
        expires_at timestamptz NOT NULL,
        fingerprint bytea NOT NULL,
        card_ciphertext bytea NOT NULL,
        wrapped_key bytea NOT NULL,
        kek_id text NOT NULL,
        transaction_mode text,
        verification_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      ) WITH (fillfactor = 90)`);
    // The same card kept once per merchant and customer reference.
    await q.query(`
      CREATE UNIQUE INDEX card_tokens_card_idx
        ON card_tokens (merchant_id, coalesce(custom_reference, ''), fingerprint)`);
    await q.query(
      `CREATE INDEX card_tokens_reference_idx ON card_tokens (merchant_id, custom_reference, created_at DESC)`,
    );
    // What a KEK rotation still has to re-wrap.
    await q.query(`CREATE INDEX card_tokens_kek_idx ON card_tokens (kek_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE card_tokens`);
  }
}
