import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Orders1763800000100 implements MigrationInterface {
  name = 'Orders1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE orders (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        merchant_name text NOT NULL DEFAULT '',
        merchant_mode text NOT NULL CHECK (merchant_mode IN ('sandbox', 'live')),
        checkout_key uuid NOT NULL,
        order_ref text,
        iso_amount bigint NOT NULL CHECK (iso_amount > 0),
        currency char(3) NOT NULL,
        status text NOT NULL,
        shopper jsonb,
        order_options jsonb,
        payment_options jsonb,
        metadata jsonb,
        expires_at timestamptz NOT NULL,
        payment_id uuid,
        last_transaction_id uuid,
        refunded_iso_amount bigint NOT NULL DEFAULT 0,
        canceled_at timestamptz,
        expired_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX orders_merchant_idx ON orders (merchant_id, created_at DESC)`);
    await q.query(`CREATE INDEX orders_merchant_ref_idx ON orders (merchant_id, order_ref)`);
    await q.query(
      `CREATE INDEX orders_expiry_idx ON orders (expires_at) WHERE status IN ('created', 'pending')`,
    );
    await q.query(`
      CREATE TABLE order_transactions (
        transaction_id uuid PRIMARY KEY,
        order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
        operation_type text NOT NULL,
        status text NOT NULL,
        iso_amount bigint NOT NULL,
        payment_method text,
        source_transaction_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX order_transactions_order_idx ON order_transactions (order_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE order_transactions`);
    await q.query(`DROP TABLE orders`);
  }
}
