import { createHash, randomBytes } from 'node:crypto';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { EventEnvelope } from '@byrd/contracts';
import { MerchantDirectory } from '../auth/merchants.js';
import type { MerchantMode } from '../auth/api-keys.js';
import {
  dataSourceOptions,
  dropDatabase,
  ensureDatabase,
  runMigrations,
  type DatabaseOptions,
} from '../database/data-source.js';
import { NatsContext } from '../messaging/nats.js';
import { ensureEventsStream } from '../messaging/streams.js';
import { generateRpcKeyPair, RpcIdentity } from '../rpc/rpc-identity.js';

import pg from 'pg';

/** Services that get an RPC identity in a test run, as npm start and the chart give them. */
const RPC_SERVICES = ['orders', 'payments', 'gateway-tokens', 'hosted-form-bff', 'webhook-service'];

const PG_BASE = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Leftovers of runs that died before cleanup are removed once they are this old. */
const STALE_AFTER_MS = 2 * 3_600_000;
/** PostgreSQL's "database does not exist". */
const INVALID_CATALOG_NAME = '3D000';
let staleSwept = false;
let databasesSwept = false;
/** The NATS server every test tier uses (TEST_NATS_URL, else NATS_URL, else the local one). */
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export interface TestMerchant {
  merchantId: string;
  apiKey: string;
  name: string;
  mode: MerchantMode;
}

/**
 * One test run's own world on the real PostgreSQL and NATS: databases, stream, KV buckets and a
 * subject prefix named with a random id, so parallel runs never collide; `cleanup` removes them.
 */
export class TestEnvironment {
  private readonly databases = new Set<string>();
  private readonly collectors: EventCollector[] = [];
  /** Each service's RPC identity key pair for this run (signing authenticated RPC subjects). */
  private readonly rpcKeys = new Map<string, { privateKey: string; publicKey: string }>(
    RPC_SERVICES.map((service) => [service, generateRpcKeyPair()]),
  );

  private constructor(
    readonly id: string,
    readonly nats: NatsContext,
    private readonly directory: MerchantDirectory,
    private readonly natsUrl: string,
  ) {}

  /** `natsUrl`: another broker than the shared one (a `PrivateNatsServer` a test stops and starts). */
  static async create({ natsUrl = TEST_NATS_URL }: { natsUrl?: string } = {}): Promise<TestEnvironment> {
    const id = newRunId();
    const nats = await NatsContext.open({ url: natsUrl, name: `test-${id}` }, `${id}.`);
    if (!staleSwept) {
      staleSwept = true;
      await sweepStaleRuns(nats);
    }
    await ensureEventsStream(nats.jsm, `EVENTS_${id}`, `${id}.`);
    const directory = new MerchantDirectory(
      await nats.kv(`MERCHANTS_${id}`),
      await nats.kv(`API_KEYS_${id}`),
    );
    return new TestEnvironment(id, nats, directory, natsUrl);
  }

  get streamName(): string {
    return `EVENTS_${this.id}`;
  }

  /** A fresh database for a service of this run (created now, dropped by cleanup). */
  async database(service: string): Promise<string> {
    const url = await createTestDatabase(this.id, service);
    this.databases.add(url);
    return url;
  }

  /**
   * A database for a service of this run with `schema`'s migrations already applied (dropped by
   * cleanup): a copy of a template migrated once for that set of migrations, instead of migrating
   * every test file's database again.
   */
  async migratedDatabase(service: string, schema: MigrationSchema): Promise<string> {
    const url = testDatabaseUrl(this.id, service);
    this.databases.add(url);
    await createMigratedDatabase(url, service, schema);
    return url;
  }

  /**
   * Environment variables for a service of this run; `extra` overrides. With `schema`, its
   * DATABASE_URL is already migrated ({@link migratedDatabase}); without, it is empty.
   */
  async serviceEnv(
    service: string,
    extra: Record<string, string> = {},
    schema?: MigrationSchema,
  ): Promise<Record<string, string>> {
    return {
      NODE_ENV: 'test',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      DATABASE_URL: schema ? await this.migratedDatabase(service, schema) : await this.database(service),
      NATS_URL: this.natsUrl,
      NATS_SUBJECT_PREFIX: `${this.id}.`,
      EVENTS_STREAM: this.streamName,
      API_KEYS_BUCKET: `API_KEYS_${this.id}`,
      MERCHANTS_BUCKET: `MERCHANTS_${this.id}`,
      RATE_LIMIT_BUCKET: `RATE_LIMITS_${this.id}`,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      OUTBOX_POLL_MS: '50',
      ...(this.rpcKeys.has(service) ? { RPC_SIGNING_KEY: this.rpcKeys.get(service)!.privateKey } : {}),
      RPC_TRUSTED_CALLERS: this.rpcTrustedCallers(),
      ...extra,
    };
  }

  /** The RPC_TRUSTED_CALLERS every service of this run gets: each service's public key. */
  rpcTrustedCallers(): string {
    return [...this.rpcKeys].map(([name, keys]) => `${name}:${keys.publicKey}`).join(',');
  }

  /** A service's RPC identity as the service itself has it in this run (a test may call as it). */
  rpcIdentity(service: string): RpcIdentity {
    return RpcIdentity.fromConfig(service, {
      RPC_SIGNING_KEY: this.rpcKeyPair(service).privateKey,
      RPC_TRUSTED_CALLERS: this.rpcTrustedCallers(),
    });
  }

  /** A service's RPC key pair of this run (a test may sign as that service, or as none). */
  rpcKeyPair(service: string): { privateKey: string; publicKey: string } {
    const keys = this.rpcKeys.get(service);
    if (!keys) throw new Error(`No RPC keys for ${service}; known: ${[...this.rpcKeys.keys()].join(', ')}`);
    return keys;
  }

  async createMerchant(name = 'Test Merchant', mode: MerchantMode = 'sandbox'): Promise<TestMerchant> {
    const { merchant, apiKey } = await this.directory.create(name, mode);
    return { merchantId: merchant.merchantId, apiKey, name, mode };
  }

  revokeKey(apiKey: string): Promise<boolean> {
    return this.directory.revokeKey(apiKey);
  }

  /** Publishes an event on this run's stream as a producing service would (msgID = envelope id). */
  async publish(envelope: EventEnvelope): Promise<void> {
    await this.nats.js.publish(this.nats.subject(envelope.type), JSON.stringify(envelope), {
      msgID: envelope.id,
    });
  }

  /** Collects every event of this run's stream matching `filter` (event names or wildcards). */
  async collect(filter = '>'): Promise<EventCollector> {
    const consumer = await this.nats.js.consumers.get(this.streamName, {
      filter_subjects: this.nats.subject(filter),
      deliver_policy: DeliverPolicy.All,
    });
    const collector = new EventCollector(await consumer.consume());
    this.collectors.push(collector);
    return collector;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.collectors.map((c) => c.stop()));
    await this.nats.jsm.streams.delete(this.streamName).catch(() => undefined);
    for (const bucket of [`API_KEYS_${this.id}`, `MERCHANTS_${this.id}`, `RATE_LIMITS_${this.id}`]) {
      await this.nats.jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
    }
    await this.nats.close();
    for (const url of this.databases) await dropDatabase(url);
  }
}

export interface CollectedEvent {
  subject: string;
  seq: number;
  msgId: string | undefined;
  envelope: EventEnvelope;
}

/** Reads a stream in order and lets a test wait for the event it expects. */
export class EventCollector {
  readonly events: CollectedEvent[] = [];
  private readonly done: Promise<void>;

  constructor(private readonly messages: ConsumerMessages) {
    this.done = (async () => {
      for await (const m of messages) {
        this.events.push({
          subject: m.subject,
          seq: m.seq,
          msgId: m.headers?.get('Nats-Msg-Id') || undefined,
          envelope: m.json<EventEnvelope>(),
        });
      }
    })();
  }

  ofType(type: string): CollectedEvent[] {
    return this.events.filter((e) => e.envelope.type === type);
  }

  /** Resolves with the first event matching, or rejects after `timeoutMs` naming what was seen. */
  async waitFor(predicate: (e: EventEnvelope) => boolean, timeoutMs = 10_000): Promise<CollectedEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((e) => predicate(e.envelope));
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(
          `No matching event within ${timeoutMs} ms; saw: ${this.events.map((e) => e.envelope.type).join(', ') || 'nothing'}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(): Promise<void> {
    await this.messages.close();
    await this.done.catch(() => undefined);
  }
}

/** A new test run's id: its creation time and randomness, so runs never collide and leftovers age. */
export function newRunId(): string {
  return `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** Creates a fresh, empty database of a test run for a service and returns its URL (drop it when done). */
export async function createTestDatabase(runId: string, service: string): Promise<string> {
  const url = testDatabaseUrl(runId, service);
  await ensureDatabase(url);
  return url;
}

function testDatabaseUrl(runId: string, service: string): string {
  const url = new URL(PG_BASE);
  url.pathname = `/byrd_${runId}_${service.replace(/-/g, '_')}`;
  return url.toString();
}

/** A service's entities and migrations (the platform's are added, as `runMigrations` adds them). */
export type MigrationSchema = Pick<DatabaseOptions, 'entities' | 'migrations'>;

/**
 * Creates the database at `url` as a copy of a template holding `schema`'s migrations. The template
 * is named by a hash of the migrations' code, so a changed migration gets a new one; the first test
 * to need it migrates it (one at a time across processes: an advisory lock) and marks it a template
 * only when done, so a build that died half-way is rebuilt, never copied. Templates are kept between
 * runs (about 8 MB each); those of older migrations of the service are dropped when a new one is made.
 */
async function createMigratedDatabase(
  url: string,
  service: string,
  schema: MigrationSchema,
  attempt = 1,
): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const prefix = `byrd_migrated_${service.replace(/-/g, '_')}_`;
  const migrations = dataSourceOptions({ url, ...schema }).migrations as {
    name: string;
    prototype: object;
  }[];
  const hash = createHash('sha256');
  for (const migration of migrations) {
    hash.update(migration.name);
    for (const key of Object.getOwnPropertyNames(migration.prototype))
      hash.update(String((migration.prototype as Record<string, unknown>)[key]));
  }
  const template = `${prefix}${hash.digest('hex').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: PG_BASE });
  await admin.connect();
  try {
    const ready = async () =>
      (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate`, [template]))
        .rowCount === 1;
    if (!(await ready())) {
      await admin.query(`SELECT pg_advisory_lock(hashtext($1))`, [prefix]);
      try {
        if (!(await ready())) {
          const templateUrl = new URL(PG_BASE);
          templateUrl.pathname = `/${template}`;
          await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
          await runMigrations({ url: templateUrl.toString(), ...schema });
          await admin.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true`);
          const { rows } = await admin.query<{ datname: string }>(
            `SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`,
            [prefix, template],
          );
          for (const { datname } of rows) {
            await admin.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`).catch(() => undefined);
            await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
          }
        }
      } finally {
        await admin.query(`SELECT pg_advisory_unlock(hashtext($1))`, [prefix]);
      }
    }
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } catch (error) {
    // Dropped meanwhile by a run of other migrations (another checkout): build it again.
    if ((error as { code?: string }).code !== INVALID_CATALOG_NAME || attempt >= 3) throw error;
    await createMigratedDatabase(url, service, schema, attempt + 1);
  } finally {
    await admin.end();
  }
}

/** The creation time encoded in a run id (`t<base36 ms><hex>`), or null for other names. */
function runStartedAt(name: string): number | null {
  const match = /(?:^|_)t([0-9a-z]{8})[0-9a-f]{6}(?:_|$)/.exec(name);
  return match ? parseInt(match[1], 36) : null;
}

function isStale(name: string): boolean {
  const started = runStartedAt(name);
  return started !== null && Date.now() - started > STALE_AFTER_MS;
}

/** Drops databases and streams of test runs that crashed long ago, so they never pile up. */
async function sweepStaleRuns(nats: NatsContext): Promise<void> {
  for await (const name of nats.jsm.streams.names()) {
    if (/^(EVENTS|KV_API_KEYS|KV_MERCHANTS|KV_RATE_LIMITS)_t/.test(name) && isStale(name)) {
      await nats.jsm.streams.delete(name).catch(() => undefined);
    }
  }
  await sweepStaleDatabases();
}

/** Drops the databases of test runs that crashed long ago (once per process). */
export async function sweepStaleDatabases(): Promise<void> {
  if (databasesSwept) return;
  databasesSwept = true;
  const client = new pg.Client({ connectionString: PG_BASE });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'byrd\\_t%'`,
    );
    for (const { datname } of rows) {
      if (isStale(datname))
        await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}
