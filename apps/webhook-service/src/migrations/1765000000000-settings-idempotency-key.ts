import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `idempotency-key` a merchant sent with a new setting, on the setting itself: once it is
 * committed, a retry with that key answers this setting even when the request that created it died
 * before its answer was stored and the key's lease ran out, so a retry never subscribes the URL twice
 * (every event would then be delivered twice, under two webhook ids).
 */
export class SettingsIdempotencyKey1765000000000 implements MigrationInterface {
  name = 'SettingsIdempotencyKey1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_settings ADD COLUMN idempotency_key text`);
    await q.query(
      `CREATE INDEX webhook_settings_idempotency_key_idx ON webhook_settings (merchant_id, idempotency_key, created_at)
         WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_settings_idempotency_key_idx`);
    await q.query(`ALTER TABLE webhook_settings DROP COLUMN idempotency_key`);
  }
}
