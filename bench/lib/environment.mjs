// One benchmark run's own world on the real PostgreSQL and NATS, like the tests' TestEnvironment:
// databases byrd_bench_<id>_<service>, stream EVENTS_bench_<id>, KV buckets API_KEYS_bench_<id> and
// MERCHANTS_bench_<id>, subject prefix bench_<id>. Everything is removed by cleanup(); leftovers of
// a run that was killed are swept by the next run once they are two hours old.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadPlatform } from './platform.mjs';

const STALE_AFTER_MS = 2 * 3_600_000;

export const PG_BASE =
  process.env.BENCH_DATABASE_URL ??
  `postgres://${encodeURIComponent(process.env.PGUSER ?? 'postgres')}@${process.env.PGHOST ?? '127.0.0.1'}:${process.env.PGPORT ?? 5432}/postgres`;
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export class BenchEnvironment {
  constructor(id, nats, directory) {
    this.id = id;
    this.nats = nats;
    this.directory = directory;
    this.databases = new Map(); // service -> url
    this.merchants = [];
  }

  static async create() {
    const id = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    const run = `bench_${id}`;
    const { MerchantDirectory, NatsContext, ensureEventsStream } = await loadPlatform();
    let nats;
    try {
      nats = await NatsContext.open({ url: NATS_URL, name: `bench-${id}` }, `${run}.`);
    } catch (error) {
      throw new Error(
        `NATS does not answer on ${NATS_URL} (${error.message}). Start it: npm start -- --infra-only`,
      );
    }
    await sweepStaleRuns(nats).catch(() => undefined);
    await ensureEventsStream(nats.jsm, `EVENTS_${run}`, `${run}.`);
    const directory = new MerchantDirectory(
      await nats.kv(`MERCHANTS_${run}`),
      await nats.kv(`API_KEYS_${run}`),
    );
    return new BenchEnvironment(id, nats, directory);
  }

  get run() {
    return `bench_${this.id}`;
  }
  get streamName() {
    return `EVENTS_${this.run}`;
  }
  get subjectPrefix() {
    return `${this.run}.`;
  }

  /** Creates byrd_bench_<id>_<service> (dropped by cleanup) and returns its URL. */
  async database(service) {
    if (this.databases.has(service)) return this.databases.get(service);
    const url = new URL(PG_BASE);
    const name = `byrd_${this.run}_${service.replaceAll('-', '_')}`;
    url.pathname = `/${name}`;
    await withAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
    this.databases.set(service, url.toString());
    return url.toString();
  }

  /** The variables a service of this run starts with (as TestEnvironment.serviceEnv, production-like). */
  async serviceEnv(service, { port, extra = {} } = {}) {
    return {
      NODE_ENV: 'production',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port ?? 0),
      DATABASE_URL: await this.database(service),
      NATS_URL,
      NATS_SUBJECT_PREFIX: this.subjectPrefix,
      EVENTS_STREAM: this.streamName,
      API_KEYS_BUCKET: `API_KEYS_${this.run}`,
      MERCHANTS_BUCKET: `MERCHANTS_${this.run}`,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      ...extra,
    };
  }

  /** A merchant in this run's MERCHANTS bucket with an API key in its API_KEYS bucket. */
  async createMerchant(name = 'Bench Merchant', mode = 'sandbox') {
    const { merchant, apiKey } = await this.directory.create(name, mode);
    const created = { merchantId: merchant.merchantId, apiKey, name, mode };
    this.merchants.push(created);
    return created;
  }

  /** { messages, bytes, firstSeq, lastSeq } of this run's events stream. */
  async streamState() {
    const info = await this.nats.jsm.streams.info(this.streamName);
    return { messages: info.state.messages, bytes: info.state.bytes, lastSeq: info.state.last_seq };
  }

  /** Pending + unacknowledged messages of a durable consumer of this run's stream (null when absent). */
  async consumerBacklog(durable) {
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

  async cleanup() {
    const problems = [];
    for (const stream of [this.streamName, `KV_API_KEYS_${this.run}`, `KV_MERCHANTS_${this.run}`]) {
      await this.nats.jsm.streams.delete(stream).catch((error) => {
        if (!/not found/i.test(error.message)) problems.push(`stream ${stream}: ${error.message}`);
      });
    }
    await this.nats.close().catch(() => undefined);
    for (const url of this.databases.values()) {
      const name = new URL(url).pathname.slice(1);
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(
        (error) => problems.push(`database ${name}: ${error.message}`),
      );
    }
    return problems;
  }
}

/** A pg.Pool on one database of the run (for ledger checks), closed by the caller. */
export function poolFor(url, max = 2) {
  return new pg.Pool({ connectionString: url, max, application_name: 'byrd-bench' });
}

export async function withAdmin(fn) {
  const client = new pg.Client({ connectionString: PG_BASE, application_name: 'byrd-bench' });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL does not answer on ${PG_BASE} (${error.message}). Start it: npm start -- --infra-only`,
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function startedAt(name) {
  const match = /bench_([0-9a-z]{8})[0-9a-f]{6}(?:_|$)/.exec(name);
  return match ? parseInt(match[1], 36) : null;
}

const isStale = (name) => {
  const started = startedAt(name);
  return started !== null && Date.now() - started > STALE_AFTER_MS;
};

/** Drops databases and streams of benchmark runs that died more than two hours ago. */
async function sweepStaleRuns(nats) {
  for await (const name of nats.jsm.streams.names()) {
    if (/^(EVENTS|KV_API_KEYS|KV_MERCHANTS)_bench_/.test(name) && isStale(name)) {
      await nats.jsm.streams.delete(name).catch(() => undefined);
    }
  }
  await withAdmin(async (client) => {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database WHERE datname LIKE 'byrd\\_bench\\_%'`,
    );
    for (const { datname } of rows) {
      if (isStale(datname))
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
  });
}
