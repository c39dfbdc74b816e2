import { headers } from '@nats-io/transport-node';
import pg from 'pg';
import { REPLAY_FOR_HEADER } from '../messaging/consumers.js';
import type { NatsContext } from '../messaging/nats.js';

type Out = { log: (line: string) => void; error: (line: string) => void };

interface DeadLetterRow {
  id: string;
  consumer: string;
  subject: string;
  payload: string;
  error: string;
  created_at: Date;
}

/** `dead-letters list`: the service's dead letters, oldest first (one line each, or one JSON line). */
export async function listDeadLetters(databaseUrl: string, out: Out, json: boolean): Promise<number> {
  const rows = await onDatabase(databaseUrl, async (client) => {
    const result = await client.query<DeadLetterRow>(
      'SELECT id, consumer, subject, payload, error, created_at FROM dead_letters ORDER BY id',
    );
    return result.rows;
  });
  if (json) {
    out.log(JSON.stringify(rows.map(({ created_at, ...row }) => ({ ...row, createdAt: created_at }))));
    return 0;
  }
  if (rows.length === 0) out.log('No dead letters.');
  for (const row of rows)
    out.log(`${row.id}  ${row.created_at.toISOString()}  ${row.consumer}  ${row.subject}  ${row.error}`);
  return 0;
}

/**
 * `dead-letters replay <id> | --all`: publishes each dead letter's event to its subject again, as it
 * was received, then removes the row, in one transaction per run (rows locked, so two runs never send
 * one twice at once). Every durable consumer of the subject receives it, but only the one that set it
 * aside, named in REPLAY_FOR_HEADER, handles it: the others acknowledge it untouched (their inbox may
 * have forgotten the event long ago). The msgID names the dead letter, so JetStream drops the
 * re-publish of a run that stopped before its commit, within its duplicate window; after it, the
 * consumer's inbox does once it has handled the event. Letters another run holds are passed by and
 * counted (exit 1): that run may be replaying them, or have died with its session not yet ended.
 */
export async function replayDeadLetters(
  databaseUrl: string,
  nats: NatsContext,
  which: { id?: string; all: boolean },
  out: Out,
): Promise<number> {
  if (!which.all && !/^\d+$/.test(which.id ?? '')) {
    out.error('dead-letters replay needs the id of a dead letter (see dead-letters list) or --all');
    return 1;
  }
  const { replayed, held } = await onDatabase(databaseUrl, async (client) => {
    await client.query('BEGIN');
    try {
      // One statement, so one snapshot: the letters it locks, and those of the selection another run
      // holds (a letter set aside meanwhile is in neither).
      const selected = await client.query<DeadLetterRow & { held: number }>(
        `WITH picked AS (
           SELECT id, consumer, subject, payload, created_at FROM dead_letters
            WHERE $1::bigint IS NULL OR id = $1 ORDER BY id FOR UPDATE SKIP LOCKED),
         held AS (
           SELECT count(*)::int AS held FROM dead_letters d
            WHERE ($1::bigint IS NULL OR d.id = $1) AND NOT EXISTS (SELECT 1 FROM picked p WHERE p.id = d.id))
         SELECT p.*, held.held FROM held LEFT JOIN picked p ON true ORDER BY p.id`,
        [which.all ? null : which.id],
      );
      const rows = selected.rows.filter((row) => row.id !== null);
      const held = selected.rows[0].held;
      for (const row of rows) {
        const replayFor = headers();
        replayFor.set(REPLAY_FOR_HEADER, row.consumer);
        await nats.js.publish(row.subject, row.payload, {
          msgID: `dead-letter:${row.consumer}:${row.id}:${row.created_at.getTime()}`,
          headers: replayFor,
        });
      }
      await client.query('DELETE FROM dead_letters WHERE id = ANY ($1::bigint[])', [rows.map((r) => r.id)]);
      await client.query('COMMIT');
      return { replayed: rows, held };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
  if (!which.all && replayed.length === 0) {
    out.error(`No dead letter ${which.id} (or another run is replaying it)`);
    return 1;
  }
  if (replayed.length > 0 || held === 0)
    out.log(
      replayed.length === 0
        ? 'No dead letters.'
        : `Replayed ${replayed.length}: ${replayed.map((r) => `${r.id} (${r.subject})`).join(', ')}`,
    );
  if (held === 0) return 0;
  // Not "none": a run killed before its commit may hold them until PostgreSQL ends its session.
  out.error(
    `${held} dead letters held by another run (replaying them, or stopped before its commit with its ` +
      'database session not ended yet): not replayed here; run again once it has ended',
  );
  return 1;
}

async function onDatabase<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
