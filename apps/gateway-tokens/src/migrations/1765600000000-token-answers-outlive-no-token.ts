import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No answer kept under an idempotency-key names a token that is gone. `DELETE /tokens/{id}` erases
 * the answers stored so far in its own transaction, but a create still waiting on its verification
 * RPC stores its answer (holder, masked number, expiry, 3DS values) after that, to be replayed for
 * 24 h. This trigger checks, as such an answer is stored, that its token still exists, under a key
 * share lock: a delete in flight is waited for and then seen, and a delete that comes later waits
 * for the answer's commit and erases it with the others. An answer whose token is gone is not kept:
 * the key is left free, and a retry of it runs as a new request.
 */
export class TokenAnswersOutliveNoToken1765600000000 implements MigrationInterface {
  name = 'TokenAnswersOutliveNoToken1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION idempotency_keys_token_answer() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        token_id text := NEW.response_body ->> 'tokenId';
      BEGIN
        IF token_id IS NULL OR token_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
          RETURN NEW;
        END IF;
        PERFORM 1 FROM card_tokens WHERE id = token_id::uuid FOR KEY SHARE;
        IF NOT FOUND THEN
          NEW.response_status := NULL;
          NEW.response_body := NULL;
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER idempotency_keys_token_answer
        BEFORE INSERT OR UPDATE OF response_body ON idempotency_keys
        FOR EACH ROW WHEN (NEW.response_body ? 'tokenId')
        EXECUTE FUNCTION idempotency_keys_token_answer()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER idempotency_keys_token_answer ON idempotency_keys`);
    await q.query(`DROP FUNCTION idempotency_keys_token_answer()`);
  }
}
