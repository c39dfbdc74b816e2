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
    // Replicas of the version before, still serving while a deploy rolls out, insert resends
    // without it: the database copies it from the webhook, so their resend requests keep working.
    await q.query(`
      CREATE FUNCTION webhook_resends_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.settings_id IS NULL THEN
          SELECT settings_id INTO NEW.settings_id FROM webhooks WHERE id = NEW.webhook_id;
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER webhook_resends_endpoint BEFORE INSERT ON webhook_resends
        FOR EACH ROW EXECUTE FUNCTION webhook_resends_endpoint()`);
    await q.query(
      `CREATE INDEX webhook_resends_endpoint_due_idx ON webhook_resends (settings_id, next_attempt_at)`,
    );
    await q.query(`DROP INDEX webhook_resends_due_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_resends_due_idx ON webhook_resends (next_attempt_at)`);
    await q.query(`DROP INDEX webhook_resends_endpoint_due_idx`);
    await q.query(`DROP TRIGGER webhook_resends_endpoint ON webhook_resends`);
    await q.query(`DROP FUNCTION webhook_resends_endpoint()`);
    await q.query(`ALTER TABLE webhook_resends DROP COLUMN settings_id`);
  }
}
