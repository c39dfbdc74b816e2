import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * `card_tokens_merchant_list_idx` (merchant_id, created_at DESC, id): `GET /api/v2/tokens` without a
 * `customReference` lists a merchant's tokens newest first, and with only the reference's index it
 * read and sorted the merchant's whole vault for every page (and counted it from the table). Now a
 * page is an index range, and the count an index-only scan.
 *
 * Built CONCURRENTLY (outside a transaction), so a large vault keeps taking writes meanwhile; an
 * index left invalid by an interrupted build is dropped and built again.
 */
export class TokenListIndex1766300000000 implements MigrationInterface {
  name = 'TokenListIndex1766300000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      q,
      'card_tokens_merchant_list_idx',
      `ON card_tokens (merchant_id, created_at DESC, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, 'card_tokens_merchant_list_idx');
  }
}
