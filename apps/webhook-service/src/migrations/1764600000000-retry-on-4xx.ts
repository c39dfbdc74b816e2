import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Per setting: whether a 4xx answer is retried like any failure (the default) or ends the webhook. */
export class RetryOn4xx1764600000000 implements MigrationInterface {
  name = 'RetryOn4xx1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings ADD COLUMN retry_on_4xx boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings DROP COLUMN retry_on_4xx`);
  }
}
