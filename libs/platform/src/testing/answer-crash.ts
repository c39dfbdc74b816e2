import pg from 'pg';
import type { ServiceProcess } from './service-process.js';

/** What `killBeforeAnswerStored` holds, sends and kills. */
export interface AnswerCrash {
  /** The service's database (its DATABASE_URL). */
  databaseUrl: string;
  service: ServiceProcess;
  /** The row the request changes: held locked until the request has claimed its key. */
  row: { table: string; id: string };
  idempotencyKey: string;
  /** Sends the request with `idempotencyKey` (its answer, if any, is ignored). */
  send: () => Promise<unknown>;
}

async function waitFor(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await probe());) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * kill -9 of a service at the last step of a request with an idempotency-key: storing its answer
 * under the key. The request is held at its row until its key is claimed, then the key's row is
 * locked, so the request does its work and waits to store its answer; the process is killed there
 * (and its waiting statement with it). Whatever the request committed before stays; its answer is
 * not stored, and the key is free once its lease runs out.
 */
export async function killBeforeAnswerStored(crash: AnswerCrash): Promise<void> {
  const { databaseUrl, service, row, idempotencyKey } = crash;
  const rows = new pg.Client({ connectionString: databaseUrl });
  const keys = new pg.Client({ connectionString: databaseUrl });
  await rows.connect();
  await keys.connect();
  try {
    const pidOf = async (client: pg.Client) =>
      (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const ours = [await pidOf(rows), await pidOf(keys)];
    await rows.query('BEGIN');
    await rows.query(`SELECT 1 FROM ${pg.escapeIdentifier(row.table)} WHERE id = $1 FOR UPDATE`, [row.id]);
    void crash.send().catch(() => undefined);
    await waitFor('the key claimed', async () => {
      const found = await keys.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [idempotencyKey]);
      return found.rowCount === 1;
    });
    await keys.query('BEGIN');
    await keys.query('SELECT 1 FROM idempotency_keys WHERE key = $1 FOR UPDATE', [idempotencyKey]);
    await rows.query('ROLLBACK');
    // The statement storing an answer (the guard's, or a use case's own), waiting on the key's row.
    await waitFor('the answer waiting on its key', async () => {
      const waiting = await rows.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query ILIKE '%SET response_status =%' AND NOT (pid = ANY($1))`,
        [ours],
      );
      return (waiting.rowCount ?? 0) > 0;
    });
    service.child.kill('SIGKILL');
    await service.exited();
    // Its statements waiting on the lock would still run once the lock goes (PostgreSQL notices a
    // gone client only when it answers): they die with its process.
    await rows.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND NOT (pid = ANY($1))`,
      [ours],
    );
    await keys.query('ROLLBACK');
  } finally {
    await rows.end();
    await keys.end();
  }
}
