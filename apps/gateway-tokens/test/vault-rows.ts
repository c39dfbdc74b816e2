import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@byrd/platform';
import { MediumDatabase } from '@byrd/platform/testing';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from '../src/database.js';
import type { CardCipher } from '../src/vault/card-cipher.js';

/**
 * A migrated vault database of the test's own (`db`), and `session`: one connection to it, whose
 * table statistics `cardTokenReads` can flush (`closeVaultDatabase` ends both).
 */
export async function vaultDatabase(): Promise<{ db: MediumDatabase; session: DataSource }> {
  const db = await MediumDatabase.create({
    service: 'gateway_tokens',
    entities: TOKENS_ENTITIES,
    migrations: TOKENS_MIGRATIONS,
  });
  const session = new DataSource(
    dataSourceOptions({ url: db.url, entities: TOKENS_ENTITIES, migrations: [], poolSize: 1 }),
  );
  await session.initialize();
  return { db, session };
}

export async function closeVaultDatabase(vault: {
  db?: MediumDatabase;
  session?: DataSource;
}): Promise<void> {
  await vault.session?.destroy();
  await vault.db?.close();
}

/** `count` sealed cards of one merchant, written directly (the API would take minutes for 50 000). */
export async function insertTokens(
  dataSource: DataSource,
  cipher: CardCipher,
  count: number,
  merchantId = 'm-1',
): Promise<void> {
  const card = { number: '4242424242424242', expiration: '12/39', holder: 'Ana Silva' };
  for (let done = 0; done < count; done += 5_000) {
    const ids = Array.from({ length: Math.min(5_000, count - done) }, () => randomUUID());
    const sealed = ids.map((id) => cipher.seal(id, card));
    await dataSource.query(
      `INSERT INTO card_tokens (id, merchant_id, brand, masked_number, expiration, expires_at, fingerprint,
                                card_ciphertext, wrapped_key, kek_id)
       SELECT id, $6, 'VISA', '424242******4242', '12/39', '2040-01-01', fingerprint, ciphertext, wrapped_key, kek_id
         FROM unnest($1::uuid[], $2::bytea[], $3::bytea[], $4::bytea[], $5::text[])
           AS n (id, fingerprint, ciphertext, wrapped_key, kek_id)`,
      [
        ids,
        ids.map(() => randomBytes(32)),
        sealed.map((s) => s.ciphertext),
        sealed.map((s) => s.wrappedKey),
        sealed.map((s) => s.kekId),
        merchantId,
      ],
    );
  }
}

/**
 * Rows of card_tokens read so far (sequential scans and index fetches) and updated, with `session`'s
 * counts flushed (`pg_stat_force_next_flush`: one connection), as `observer` reads them; waits (up
 * to 5 s) until `expectUpdated` updates show.
 */
export async function cardTokenReads(
  session: DataSource,
  observer: DataSource,
  expectUpdated = 0,
): Promise<{ read: number; updated: number }> {
  await session.query(`SELECT pg_stat_force_next_flush()`);
  await session.query(`SELECT 1`);
  for (let tries = 0; ; tries++) {
    const [stats] = await observer.query<{ read: string; updated: string }[]>(
      `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS read, n_tup_upd AS updated
         FROM pg_stat_user_tables WHERE relname = 'card_tokens'`,
    );
    const result = { read: Number(stats.read), updated: Number(stats.updated) };
    if (result.updated >= expectUpdated || tries === 50) return result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
