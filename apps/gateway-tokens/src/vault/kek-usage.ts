import type { DataSource, EntityManager } from 'typeorm';

/**
 * How many card tokens each KEK other than `except` wraps, by KEK id (none: an empty map). The ids
 * in use are found by a loose scan of the index on kek_id (one probe per distinct id, not a
 * pass over the table), so the check is cheap enough for every start; only ids outside `except`
 * are counted.
 */
export async function tokensByKek(
  db: DataSource | EntityManager,
  except: readonly string[],
): Promise<Map<string, number>> {
  const rows = await db.query<{ kek_id: string; tokens: number }[]>(
    `WITH RECURSIVE used (kek_id) AS (
       SELECT min(kek_id) FROM card_tokens
       UNION ALL
       SELECT (SELECT min(kek_id) FROM card_tokens WHERE kek_id > used.kek_id) FROM used
        WHERE used.kek_id IS NOT NULL
     )
     SELECT used.kek_id, (SELECT count(*)::int FROM card_tokens t WHERE t.kek_id = used.kek_id) AS tokens
       FROM used
      WHERE used.kek_id IS NOT NULL AND used.kek_id <> ALL($1::text[])
      ORDER BY used.kek_id`,
    [except],
  );
  return new Map(rows.map((row) => [row.kek_id, row.tokens]));
}

/** `k1: 3 tokens, k0: 1 token`. */
export function describeTokensByKek(counts: Map<string, number>): string {
  return [...counts].map(([id, n]) => `${id}: ${n} token${n === 1 ? '' : 's'}`).join(', ');
}
