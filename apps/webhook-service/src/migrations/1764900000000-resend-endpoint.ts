import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A resend belongs to its webhook's endpoint (docs/webhook-fairness.md): it takes a slot of that
 * endpoint's fair share like a scheduled delivery. `settings_id` (the webhook's, copied when the
 * resend is asked) and `webhook_resends_endpoint_due_idx` let discovery list the endpoints with
 * resends waiting (one index probe each) and the claim read each endpoint's oldest ones, so one
 * merchant's thousands of resends cost another endpoint's claim nothing. It replaces
 * `webhook_resends_due_idx` (due time alone, the global queue), which nothing reads any more. The
 * table holds only resends waiting for their attempt: small, so built in the migration's transaction.
 */
export class ResendEndpoint1764900000000 implements MigrationInterface {
  name = 'ResendEndpoint1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_resends ADD COLUMN settings_id uuid`);
    await q.query(
      `UPDATE webhook_resends r SET settings_id = w.settings_id FROM webhooks w WHERE w.id = r.webhook_id`,
    );
    await q.query(`ALTER TABLE webhook_resends ALTER COLUMN settings_id SET NOT NULL`);
    await q.query(
      `CREATE INDEX webhook_resends_endpoint_due_idx ON webhook_resends (settings_id, next_attempt_at)`,
    );
    await q.query(`DROP INDEX webhook_resends_due_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_resends_due_idx ON webhook_resends (next_attempt_at)`);
    await q.query(`DROP INDEX webhook_resends_endpoint_due_idx`);
    await q.query(`ALTER TABLE webhook_resends DROP COLUMN settings_id`);
  }
}
