import type { DataSource } from 'typeorm';
import type { CardCipher } from './card-cipher.js';

export interface RotationProgress {
  rewrapped: number;
  /** Data keys still wrapped by another KEK (0 once done). */
  remaining: number;
}

/**
 * Re-wraps every data key not under the active KEK, in batches of short transactions that skip rows
 * a request is writing (`FOR UPDATE SKIP LOCKED`), so the vault keeps serving throughout. Card
 * ciphertexts are untouched: only the 60-byte wrapped keys change, each in one UPDATE with its KEK
 * id, so a reader always sees a matching pair. Safe to stop and run again.
 */
export async function rotateKek(
  dataSource: DataSource,
  cipher: CardCipher,
  options: { batchSize?: number; onBatch?: (progress: RotationProgress) => void } = {},
): Promise<RotationProgress> {
  const batchSize = options.batchSize ?? 500;
  const active = cipher.activeKekId;
  let rewrapped = 0;
  for (;;) {
    const done = await dataSource.transaction(async (manager) => {
      const rows = await manager.query<{ id: string; wrapped_key: Buffer; kek_id: string }[]>(
        `SELECT id, wrapped_key, kek_id FROM card_tokens WHERE kek_id <> $1
         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [active, batchSize],
      );
      if (rows.length === 0) return true;
      const next = rows.map((row) => ({ id: row.id, ...cipher.rewrap(row.id, row.wrapped_key, row.kek_id) }));
      await manager.query(
        `UPDATE card_tokens AS t SET wrapped_key = n.wrapped_key, kek_id = n.kek_id, updated_at = now()
         FROM unnest($1::uuid[], $2::bytea[], $3::text[]) AS n (id, wrapped_key, kek_id)
         WHERE t.id = n.id`,
        [next.map((n) => n.id), next.map((n) => n.wrappedKey), next.map((n) => n.kekId)],
      );
      rewrapped += rows.length;
      return false;
    });
    const [{ remaining }] = await dataSource.query<{ remaining: number }[]>(
      `SELECT count(*)::int AS remaining FROM card_tokens WHERE kek_id <> $1`,
      [active],
    );
    if (!done) options.onBatch?.({ rewrapped, remaining });
    // Rows locked by a request are picked up by a later pass; stop only when none is left at all.
    if (done && remaining === 0) return { rewrapped, remaining };
    if (done) await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
