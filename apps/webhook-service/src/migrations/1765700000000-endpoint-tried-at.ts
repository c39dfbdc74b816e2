import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an endpoint's scheduled attempts were last seen (a little late: EndpointObservations writes it
 * at most every quarter of its gap). A failing streak (`failing_since`) only counts for as long as
 * attempts kept being made: after a gap (delivery stopped, replicas down) it starts again at the
 * next attempt, and ExpireHeldWebhooks fails nothing at an endpoint nobody is trying now. Null until
 * the first attempt after this migration, which therefore restarts every streak once: a receiver
 * that was failing before the deploy gets the whole schedule again before its webhooks are failed.
 */
export class EndpointTriedAt1765700000000 implements MigrationInterface {
  name = 'EndpointTriedAt1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings ADD COLUMN tried_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings DROP COLUMN tried_at`);
  }
}
