import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fairness between receivers (docs/webhook-fairness.md).
 *
 * `webhooks_endpoint_due_idx` orders each setting's pending webhooks by due time, so the claim reads
 * the first few due rows of every endpoint instead of the oldest due rows overall: a backlog of
 * 100 000 rows at one endpoint costs the claim a handful of index entries, not a scan past them.
 * It replaces `webhooks_due_idx` (next_attempt_at alone): with both, the planner may read one
 * endpoint's rows through the global order and filter past another endpoint's whole backlog.
 *
 * `webhook_circuits` holds one circuit breaker per setting (its URL), shared by every replica:
 * `closed` (normal), `open` (the claim passes the endpoint over until `retry_at`), `half-open` (one
 * probe delivery is out; `retry_at` is the end of its lease). A setting without a row is closed.
 */
export class EndpointFairness1764700000000 implements MigrationInterface {
  name = 'EndpointFairness1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX webhooks_endpoint_due_idx ON webhooks (settings_id, next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(`DROP INDEX webhooks_due_idx`);
    await q.query(`
      CREATE TABLE webhook_circuits (
        settings_id uuid PRIMARY KEY REFERENCES webhook_settings (id) ON DELETE CASCADE,
        state text NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
        failures integer NOT NULL DEFAULT 0,
        retry_at timestamptz,
        opened_at timestamptz,
        last_error text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_circuits_open_has_retry CHECK ((state = 'closed') = (retry_at IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_circuits`);
    await q.query(`CREATE INDEX webhooks_due_idx ON webhooks (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`DROP INDEX webhooks_endpoint_due_idx`);
  }
}
