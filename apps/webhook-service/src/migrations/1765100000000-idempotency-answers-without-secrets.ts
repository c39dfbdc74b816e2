import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new setting's answer carries its credential and signing secret, which webhook_settings keeps
 * sealed: the idempotency-key no longer stores it (AnswerHoldsSecrets; a replay answers from the
 * setting). The answers stored before are cleared the same way, so no secret stays unsealed.
 */
export class IdempotencyAnswersWithoutSecrets1765100000000 implements MigrationInterface {
  name = 'IdempotencyAnswersWithoutSecrets1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE idempotency_keys SET response_body = 'null'::jsonb
        WHERE response_status < 400 AND jsonb_typeof(response_body -> 'data') = 'object'
          AND (response_body -> 'data') ? 'signingSecret'`,
    );
  }

  async down(): Promise<void> {
    // The secrets cleared are not brought back: replays answer from the settings.
  }
}
