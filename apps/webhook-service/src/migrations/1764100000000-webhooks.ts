import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1764100000000 implements MigrationInterface {
  name = 'Webhooks1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_settings (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        merchant_mode text NOT NULL CHECK (merchant_mode IN ('sandbox', 'live')),
        url text NOT NULL,
        credential_type text NOT NULL CHECK (credential_type IN ('api-key', 'basic')),
        api_key text,
        username text,
        password text,
        signing_secret text NOT NULL,
        events text[] NOT NULL DEFAULT '{}',
        payment_methods text[] NOT NULL DEFAULT '{}',
        store_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX webhook_settings_merchant_idx ON webhook_settings (merchant_id, created_at DESC)
       WHERE deleted_at IS NULL`,
    );

    // One row per (event, settings). next_attempt_at is when the row is next due: the retry time,
    // or, while a worker holds it, the end of that worker's lease (so a dead worker's claim simply
    // becomes due again). lease_token names the current claim.
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        merchant_id text NOT NULL,
        settings_id uuid NOT NULL REFERENCES webhook_settings (id),
        event_id uuid NOT NULL,
        event text NOT NULL,
        payment_method text,
        reference_ids text[] NOT NULL DEFAULT '{}',
        content jsonb NOT NULL,
        occurred_at timestamptz NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
        attempt_count integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_token uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        finished_at timestamptz,
        CONSTRAINT webhooks_pending_has_due CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
        CONSTRAINT webhooks_event_settings_key UNIQUE (settings_id, event_id)
      )`);
    // The claim reads only what is due: its cost follows the due rows, not the stored ones.
    await q.query(`CREATE INDEX webhooks_due_idx ON webhooks (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhooks_merchant_idx ON webhooks (merchant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhooks_reference_ids_idx ON webhooks USING gin (reference_ids)`);
    await q.query(
      `CREATE INDEX webhooks_finished_idx ON webhooks (status, created_at) WHERE status <> 'pending'`,
    );

    await q.query(`
      CREATE TABLE webhook_attempts (
        id uuid PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('scheduled', 'resend')),
        number integer,
        url text NOT NULL,
        request_body text NOT NULL,
        status_code integer,
        response_body text,
        error text,
        duration_ms integer NOT NULL,
        succeeded boolean NOT NULL,
        retry_delay_ms integer,
        created_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, created_at DESC, id DESC)`,
    );

    // Manual resends: one extra attempt each, claimed like webhooks (lease in next_attempt_at).
    await q.query(`
      CREATE TABLE webhook_resends (
        id uuid PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        url text,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_token uuid,
        requested_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_resends_due_idx ON webhook_resends (next_attempt_at)`);
    await q.query(`CREATE INDEX webhook_resends_webhook_idx ON webhook_resends (webhook_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_resends`);
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhooks`);
    await q.query(`DROP TABLE webhook_settings`);
  }
}
