import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A shopper's code is checked with the issuer once per challenge, whatever replica each submission
 * reaches: the request that asks first claims the check on the session row until a deadline (no lock
 * or transaction held while the issuer answers); the others wait for its outcome, or take the check
 * over once the claim has run out (its process died). Nullable columns: no rewrite of the table.
 */
export class ThreeDSCheckClaims1766100000200 implements MigrationInterface {
  name = 'ThreeDSCheckClaims1766100000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE three_ds_sessions ADD COLUMN check_claim_id uuid, ADD COLUMN check_claimed_until timestamptz`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE three_ds_sessions DROP COLUMN check_claim_id, DROP COLUMN check_claimed_until`,
    );
  }
}
