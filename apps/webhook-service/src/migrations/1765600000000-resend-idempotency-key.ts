import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a resend sent with an `idempotency-key` queued, kept under that key: a retry with the key
 * whose first answer was lost (the request died after its resends were committed, before the key's
 * answer was stored) answers the same and queues nothing more. Not a column of `webhook_resends`:
 * a resend's row goes as soon as its attempt is recorded, usually long before a merchant retries.
 * Rows past the key's retention are purged by the retention sweep (`created_at` index).
 */
export class ResendIdempotencyKey1765600000000 implements MigrationInterface {
  name = 'ResendIdempotencyKey1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_resend_requests (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        idempotency_key text NOT NULL,
        ids uuid[] NOT NULL,
        url text,
        resent uuid[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX webhook_resend_requests_key_idx
         ON webhook_resend_requests (merchant_id, idempotency_key, created_at)`,
    );
    await q.query(`CREATE INDEX webhook_resend_requests_created_idx ON webhook_resend_requests (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_resend_requests`);
  }
}
