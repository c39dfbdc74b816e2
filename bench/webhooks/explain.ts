// EXPLAIN (ANALYZE, BUFFERS) of the claim statement in a rolled-back transaction, summarised: the scan
// of the due rows, its buffers, the total buffers and the execution time.
import type pg from 'pg';

export interface Plan {
  text: string[];
  summary: string[];
  usesDueIndex: boolean;
  seqScanOfWebhooks: boolean;
}

export async function explain(
  pool: pg.Pool,
  sql: string,
  params: unknown[],
  dueIndex: string,
): Promise<Plan> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
      params,
    );
    await client.query('ROLLBACK');
    const lines = rows.map((r) => r['QUERY PLAN']);
    // The scan that reads an endpoint's due rows (the loose scan over settings comes first in the plan).
    const scan =
      lines.find((l) => l.includes(`Index Scan using ${dueIndex}`)) ??
      lines.find((l) => /Scan .*on webhooks\b/.test(l));
    const scanBuffers =
      scan === undefined
        ? undefined
        : lines.slice(lines.indexOf(scan) + 1).find((l) => /^\s*Buffers:/.test(l));
    const total = lines.find((l) => /^\s*Buffers:/.test(l));
    const summary = [
      scan?.trim().replace(/\s+\(cost=[^)]*\)/, ''),
      scanBuffers && `scan ${scanBuffers.trim()}`,
      total && `total ${total.trim()}`,
      lines.find((l) => /Execution Time/.test(l))?.trim(),
    ].filter((part): part is string => Boolean(part));
    return {
      text: lines,
      summary,
      usesDueIndex: lines.some((l) => l.includes(dueIndex)),
      seqScanOfWebhooks: lines.some((l) => /Seq Scan on webhooks\b/.test(l)),
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
