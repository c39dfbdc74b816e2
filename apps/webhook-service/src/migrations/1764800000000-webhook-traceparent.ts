import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The trace context of the event a webhook delivers: each attempt's span joins that trace. */
export class WebhookTraceparent1764800000000 implements MigrationInterface {
  name = 'WebhookTraceparent1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN traceparent`);
  }
}
