import type { DataSource } from 'typeorm';
import type { CardCipher } from './card-cipher.js';
import { tokensByKek } from './kek-usage.js';

export interface RotationProgress {
  rewrapped: number;
  /** Data keys still under another KEK: counted when the pass began, less those re-wrapped since. */
  remaining: number;
}

export interface RotationResult {
  rewrapped: number;
  /** Tokens under another KEK than the active one when the rotation ended, by KEK id (empty: done). */
  remaining: Map<string, number>;
  /** Ids among those that VAULT_KEKS does not list: their tokens cannot be re-wrapped here. */
  notConfigured: string[];
  /** Tokens whose listed KEK does not open their data key (damaged, or another key under that id). */
  unopenable: string[];
}

/** Where each KEK's walk starts: below every uuid. */
const START = '00000000-0000-0000-0000-000000000000';

/**
 * Re-wraps every data key not under the active KEK, in batches of short transactions that skip rows
 * a request is writing (`FOR UPDATE SKIP LOCKED`), so the vault keeps serving throughout. Card
 * ciphertexts are untouched: only the 60-byte wrapped keys change, each in one UPDATE with its KEK
 * id, so a reader always sees a matching pair. Safe to stop and run again.
 *
 * A pass walks each old KEK's tokens in id order, a batch starting after the last id of the one
 * before: a range of `card_tokens_kek_rotation_idx` (kek_id, id), so a pass reads what is left to
 * re-wrap once, however large the vault. Rows skipped because they were locked are picked up by
 * another pass. Tokens whose KEK is not configured, or whose KEK does not open their data key, are
 * left as they are and reported, not retried for ever. It ends when those are all that is left
 * under another KEK than the active one, as counted after the last pass.
 */
export async function rotateKek(
  dataSource: DataSource,
  cipher: CardCipher,
  options: { batchSize?: number; onBatch?: (progress: RotationProgress) => void } = {},
): Promise<RotationResult> {
  const batchSize = options.batchSize ?? 500;
  const active = cipher.activeKekId;
  const others = cipher.kekIds.filter((id) => id !== active);
  let rewrapped = 0;
  let remaining = await tokensByKek(dataSource, [active]);
  for (;;) {
    const unopenable = new Set<string>();
    const atStart = rewrapped;
    const toDo = countOf(remaining, others);
    for (const kekId of others) {
      let after = START;
      for (;;) {
        const batch = await dataSource.transaction(async (manager) => {
          // Read the range in index order, never "collect every row left and sort": with no or stale
          // statistics (a new vault, a key just added) the planner would do that, every batch.
          await manager.query(`SET LOCAL enable_sort = off`);
          const rows = await manager.query<{ id: string; wrapped_key: Buffer }[]>(
            `SELECT id, wrapped_key FROM card_tokens WHERE kek_id = $1 AND id > $2
             ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
            [kekId, after, batchSize],
          );
          const next: { id: string; wrappedKey: Buffer; kekId: string }[] = [];
          for (const row of rows) {
            const rewrap = tryRewrap(cipher, row.id, row.wrapped_key, kekId);
            if (rewrap) next.push({ id: row.id, ...rewrap });
            else unopenable.add(row.id);
          }
          if (next.length > 0) {
            // The batch's index range again, so the join reads those rows, not the table (a hash
            // join over a scan of card_tokens is what the planner picks for 500 ids otherwise).
            await manager.query(
              `UPDATE card_tokens AS t SET wrapped_key = n.wrapped_key, kek_id = n.kek_id, updated_at = now()
               FROM unnest($1::uuid[], $2::bytea[], $3::text[]) AS n (id, wrapped_key, kek_id)
               WHERE t.id = n.id AND t.kek_id = $4 AND t.id > $5 AND t.id <= $6`,
              [
                next.map((n) => n.id),
                next.map((n) => n.wrappedKey),
                next.map((n) => n.kekId),
                kekId,
                after,
                rows.at(-1)!.id,
              ],
            );
          }
          return { last: rows.at(-1)?.id, rewrapped: next.length };
        });
        if (batch.last === undefined) break;
        after = batch.last;
        rewrapped += batch.rewrapped;
        options.onBatch?.({ rewrapped, remaining: Math.max(0, toDo - (rewrapped - atStart)) });
      }
    }
    // Counted after the pass, so the answer is what the table holds now, not what the pass saw.
    remaining = await tokensByKek(dataSource, [active]);
    const stillUnopenable = await stillUnder(dataSource, [...unopenable], others);
    if (countOf(remaining, others) <= stillUnopenable.length) {
      return {
        rewrapped,
        remaining,
        notConfigured: [...remaining.keys()].filter((id) => !others.includes(id)),
        unopenable: stillUnopenable,
      };
    }
    // Rows a request held locked (or written under an old KEK meanwhile): another pass.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Those of `ids` still under one of `keks`. */
async function stillUnder(dataSource: DataSource, ids: string[], keks: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await dataSource.query<{ id: string }[]>(
    `SELECT id FROM card_tokens WHERE id = ANY($1::uuid[]) AND kek_id = ANY($2::text[]) ORDER BY id`,
    [ids, keks],
  );
  return rows.map((row) => row.id);
}

/** The data key re-wrapped under the active KEK, or null when its KEK does not open it. */
function tryRewrap(
  cipher: CardCipher,
  tokenId: string,
  wrappedKey: Buffer,
  kekId: string,
): { wrappedKey: Buffer; kekId: string } | null {
  try {
    return cipher.rewrap(tokenId, wrappedKey, kekId);
  } catch {
    return null;
  }
}

/** Tokens under the given KEKs. */
function countOf(counts: Map<string, number>, keks: string[]): number {
  return keks.reduce((total, id) => total + (counts.get(id) ?? 0), 0);
}
