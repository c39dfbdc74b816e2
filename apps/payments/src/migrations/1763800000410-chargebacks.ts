import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Chargebacks1763800000410 implements MigrationInterface {
  name = 'Chargebacks1763800000410';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE chargebacks (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        transaction_id uuid NOT NULL REFERENCES transactions (id),
        order_id uuid,
        status text NOT NULL
          CHECK (status IN ('Created', 'Disputing', 'PendingAction', 'Won', 'Lost', 'Closed')),
        resolution text CHECK (resolution IN ('Won', 'Lost')),
        payment_method text NOT NULL,
        iso_amount bigint NOT NULL CHECK (iso_amount > 0),
        currency char(3) NOT NULL,
        reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX chargebacks_transaction_idx ON chargebacks (transaction_id)`);
    await q.query(`CREATE INDEX chargebacks_merchant_idx ON chargebacks (merchant_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chargebacks`);
  }
}
