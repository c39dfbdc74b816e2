import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * SaveCardsLeftBehind looks only at the 3DS sessions still holding a card sealed for "save my card"
 * after their challenge ended: index just those (a handful at any time). Built CONCURRENTLY, so a
 * large table keeps taking payments meanwhile; an index left invalid by an interrupted build is
 * dropped and built again.
 */
export class SealedCardsToSave1766000000100 implements MigrationInterface {
  name = 'SealedCardsToSave1766000000100';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      q,
      'three_ds_sessions_sealed_to_save_idx',
      `ON three_ds_sessions (challenge_completed_at, id) WHERE sealed_card IS NOT NULL AND status <> 'Created'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, 'three_ds_sessions_sealed_to_save_idx');
  }
}
