import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Payments1763800000200 implements MigrationInterface {
  name = 'Payments1763800000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE transactions (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        merchant_mode text NOT NULL CHECK (merchant_mode IN ('sandbox', 'live')),
        order_id uuid,
        order_ref text,
        operation_type text NOT NULL,
        source_transaction_id uuid REFERENCES transactions (id),
        payment_method text NOT NULL,
        status text NOT NULL,
        code text NOT NULL,
        description text NOT NULL,
        iso_amount bigint NOT NULL CHECK (iso_amount > 0),
        currency char(3) NOT NULL,
        captured_iso_amount bigint NOT NULL DEFAULT 0,
        refunded_iso_amount bigint NOT NULL DEFAULT 0,
        released_iso_amount bigint NOT NULL DEFAULT 0,
        brand text,
        masked_card_number text,
        card_expiration text,
        holder text,
        token_id uuid,
        is_pre_auth boolean NOT NULL DEFAULT false,
        transaction_mode text NOT NULL DEFAULT 'None',
        initiated_from text NOT NULL,
        acquirer text NOT NULL,
        redirect_url text,
        request_id uuid NOT NULL,
        fingerprint uuid NOT NULL,
        async_details jsonb,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (captured_iso_amount + released_iso_amount <= iso_amount OR operation_type <> 'PreAuth'),
        CHECK (refunded_iso_amount >= 0 AND captured_iso_amount >= 0 AND released_iso_amount >= 0)
      )`);
    await q.query(`CREATE INDEX transactions_merchant_order_idx ON transactions (merchant_id, order_id)`);
    await q.query(`CREATE INDEX transactions_merchant_ref_idx ON transactions (merchant_id, order_ref)`);
    await q.query(`CREATE INDEX transactions_source_idx ON transactions (source_transaction_id)`);
    await q.query(`
      CREATE TABLE three_ds_sessions (
        id uuid PRIMARY KEY,
        transaction_id uuid NOT NULL UNIQUE REFERENCES transactions (id),
        merchant_id text NOT NULL,
        status text NOT NULL,
        challenge_required boolean NOT NULL,
        acs_trans_id uuid NOT NULL,
        ds_transaction_id uuid NOT NULL,
        protocol_version text NOT NULL,
        trans_status text,
        trans_status_reason text,
        eci text,
        aav text,
        challenge_completed_at timestamptz,
        sealed_card bytea,
        browser jsonb,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE three_ds_sessions`);
    await q.query(`DROP TABLE transactions`);
  }
}
