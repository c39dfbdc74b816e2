import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an endpoint's receiver started failing (the first failed scheduled attempt since its last
 * success; null while it answers): the evidence ExpireHeldWebhooks needs before it fails webhooks
 * nobody may have tried to deliver. The circuit itself lives in each process's memory.
 */
export class EndpointFailingSince1765500000000 implements MigrationInterface {
  name = 'EndpointFailingSince1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings ADD COLUMN failing_since timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings DROP COLUMN failing_since`);
  }
}
