// One benchmark run's own world on the real PostgreSQL and NATS: the test environment of
// @byrd/platform/testing (databases byrd_t<id>_<service>, stream EVENTS_t<id>, KV buckets, subject
// prefix, RPC identities; leftovers of a killed run swept after two hours), loaded from the code
// under test (a --ref snapshot's own), with the services started as production runs them.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { TestEnvironment } from '@byrd/platform/testing';
import { fail, pollUntil, target } from './util.js';

type Testing = typeof import('@byrd/platform/testing');

/** The bench's overrides (BENCH_DATABASE_URL, PGHOST/PGPORT/PGUSER) as the test environment reads them. */
function adminUrl(): string {
  return (
    process.env.BENCH_DATABASE_URL ??
    `postgres://${encodeURIComponent(process.env.PGUSER ?? 'postgres')}@${process.env.PGHOST ?? '127.0.0.1'}:${process.env.PGPORT ?? 5432}/postgres`
  );
}

export const testingFile = () => join(target.root, 'libs/platform/dist/testing/index.js');

let testing: Promise<Testing> | undefined;

/** @byrd/platform/testing of the code under test, imported when first needed (after any build). */
export function loadTesting(): Promise<Testing> {
  process.env.TEST_DATABASE_URL = adminUrl();
  testing ??= import(pathToFileURL(testingFile()).href) as Promise<Testing>;
  return testing;
}

export interface StreamState {
  messages: number;
  lastSeq: number;
}

export interface ConsumerBacklog {
  pending: number;
  ackPending: number;
  redelivered: number;
}

export class BenchEnvironment {
  private constructor(readonly env: TestEnvironment) {}

  static async create(): Promise<BenchEnvironment> {
    const { TestEnvironment } = await loadTesting();
    try {
      return new BenchEnvironment(await TestEnvironment.create());
    } catch (error) {
      return fail(
        `NATS or PostgreSQL does not answer (${(error as Error).message}). Start them: npm start -- --infra-only`,
      );
    }
  }

  get id() {
    return this.env.id;
  }
  get nats() {
    return this.env.nats;
  }
  get streamName() {
    return this.env.streamName;
  }

  database(service: string): Promise<string> {
    return this.env.database(service);
  }

  /**
   * The variables a service of this run starts with: the test environment's, as production runs
   * them (NODE_ENV=production, LOG_LEVEL=warn, the outbox's own poll interval), plus `extra`.
   */
  async serviceEnv(service: string, port: number, extra: Record<string, string> = {}) {
    const env = await this.env.serviceEnv(service, { NODE_ENV: 'production', LOG_LEVEL: 'warn' });
    delete env.OUTBOX_POLL_MS;
    return { ...env, HTTP_PORT: String(port), ...extra };
  }

  createMerchant(name: string) {
    return this.env.createMerchant(name, 'sandbox');
  }

  async streamState(): Promise<StreamState> {
    const info = await this.nats.jsm.streams.info(this.streamName);
    return { messages: info.state.messages, lastSeq: info.state.last_seq };
  }

  /** Pending + unacknowledged messages of a durable consumer of this run's stream (null when absent). */
  async consumerBacklog(durable: string): Promise<ConsumerBacklog | null> {
    try {
      const info = await this.nats.jsm.consumers.info(this.streamName, durable);
      return {
        pending: info.num_pending,
        ackPending: info.num_ack_pending,
        redelivered: info.num_redelivered,
      };
    } catch {
      return null;
    }
  }

  /** Whether a durable consumer exists and has nothing pending or unacknowledged. */
  async consumerIdle(durable: string): Promise<boolean> {
    const backlog = await this.consumerBacklog(durable);
    return backlog !== null && backlog.pending === 0 && backlog.ackPending === 0;
  }

  cleanup(): Promise<void> {
    return this.env.cleanup();
  }
}

/** A pg.Pool on one database of the run (ledger checks, sampling), closed by the caller. */
export function poolFor(url: string, max = 2): pg.Pool {
  return new pg.Pool({ connectionString: url, max, application_name: 'byrd-bench' });
}

/** count(*) of a statement's rows. */
export async function countOf(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(sql, params);
  return Number(rows[0].n);
}

/** Waits (at most 15 s) until `count` stops changing for 300 ms: requests a window cut off have committed. */
export async function settle(count: () => Promise<number>): Promise<void> {
  let last = -1;
  await pollUntil(
    async () => {
      const now = await count();
      const still = now === last;
      last = now;
      return still;
    },
    { timeoutMs: 15_000, intervalMs: 300 },
  );
}
