import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * `card_tokens_kek_rotation_idx` (kek_id, id) replaces `card_tokens_kek_idx` (kek_id): a rotation
 * batch takes the next rows of one old KEK after the last id it re-wrapped, an index range of the
 * batch's size, so re-wrapping a vault costs one read of what is left to re-wrap, not a read from
 * the start of the table per batch. It also finds the KEK ids in use at start (a probe per id).
 *
 * Built CONCURRENTLY (outside a transaction), so a large vault keeps taking writes meanwhile; an
 * index left invalid by an interrupted build is dropped and built again.
 */
export class KekRotationIndex1765800000000 implements MigrationInterface {
  name = 'KekRotationIndex1765800000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, 'card_tokens_kek_rotation_idx', `ON card_tokens (kek_id, id)`);
    await dropIndexConcurrently(q, 'card_tokens_kek_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, 'card_tokens_kek_idx', `ON card_tokens (kek_id)`);
    await dropIndexConcurrently(q, 'card_tokens_kek_rotation_idx');
  }
}
