import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * When a token's card was verified (`verified_at`), and when a re-tokenization staged its card
 * (`staged_at`), so a card whose verification never ended in success (the shopper abandoned 3DS,
 * the vault died before asking payments to start it) is forgotten once that verification cannot
 * succeed any more (ForgetUnverifiedCards), instead of being kept for ever.
 *
 * Backfill: a token that never needed a verification (its merchant sent 3DS data, or a hosted-form
 * "save my card") was verified when it was made. A token that did is left unknown (null): the
 * vault cannot see payments' records here, so the sweep asks payments before it forgets any card
 * (rpc.payments.tokenVerifications) and records the verification it finds: no verified token is
 * lost. A card staged already is dated by its row's last change, never earlier than its staging.
 *
 * Outside a transaction, so a large vault keeps taking writes: the backfill goes in short batches by
 * id (each its own statement, an index range), the partial indexes (only what waits: a handful of
 * rows) are built CONCURRENTLY. Killed half-way it is run again from the start, and each step is
 * idempotent (only rows still to fill are written; an index left invalid is dropped and rebuilt).
 */
export class TokenVerifiedAt1766200000000 implements MigrationInterface {
  name = 'TokenVerifiedAt1766200000000';
  transaction = false;
  /** Rows per backfill statement. */
  static batchSize = 5_000;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE card_tokens
        ADD COLUMN IF NOT EXISTS verified_at timestamptz,
        ADD COLUMN IF NOT EXISTS staged_at timestamptz`);
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const [{ last }] = (await q.query(
        `WITH batch AS (SELECT id FROM card_tokens WHERE id > $1 ORDER BY id LIMIT $2),
         filled AS (
           UPDATE card_tokens t
              SET verified_at = CASE WHEN t.verification_id IS NULL
                                     THEN coalesce(t.verified_at, t.created_at) ELSE t.verified_at END,
                  staged_at = CASE WHEN t.staged_verification_id IS NOT NULL
                                   THEN coalesce(t.staged_at, t.updated_at) ELSE t.staged_at END
             FROM batch
            WHERE t.id = batch.id
              AND ((t.verification_id IS NULL AND t.verified_at IS NULL)
                OR (t.staged_verification_id IS NOT NULL AND t.staged_at IS NULL))
           RETURNING 1)
         SELECT (SELECT id FROM batch ORDER BY id DESC LIMIT 1) AS last`,
        [after, TokenVerifiedAt1766200000000.batchSize],
      )) as { last: string | null }[];
      if (last === null) break;
      after = last;
    }
    await createIndexConcurrently(
      q,
      'card_tokens_unverified_idx',
      `ON card_tokens (created_at) WHERE verified_at IS NULL`,
    );
    await createIndexConcurrently(
      q,
      'card_tokens_staged_idx',
      `ON card_tokens (staged_at) WHERE staged_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, 'card_tokens_staged_idx');
    await dropIndexConcurrently(q, 'card_tokens_unverified_idx');
    await q.query(
      `ALTER TABLE card_tokens DROP COLUMN IF EXISTS staged_at, DROP COLUMN IF EXISTS verified_at`,
    );
  }
}
