import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables of the outbox, inbox, dead letters and idempotency keys; every service runs it first. */
export class PlatformTables1763800000000 implements MigrationInterface {
  name = 'PlatformTables1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox (
        seq bigserial PRIMARY KEY,
        id uuid NOT NULL UNIQUE,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz
      )`);
    await q.query(`CREATE INDEX outbox_pending_idx ON outbox (seq) WHERE published_at IS NULL`);
    await q.query(`
      CREATE TABLE inbox (
        consumer text NOT NULL,
        event_id uuid NOT NULL,
        subject text NOT NULL,
        handled_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, event_id)
      )`);
    await q.query(`
      CREATE TABLE dead_letters (
        id bigserial PRIMARY KEY,
        consumer text NOT NULL,
        subject text NOT NULL,
        payload text NOT NULL,
        error text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        merchant_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        response_status int,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (merchant_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE dead_letters`);
    await q.query(`DROP TABLE inbox`);
    await q.query(`DROP TABLE outbox`);
  }
}

/** Lets the outbox prune and the idempotency purge find old rows without scanning the tables. */
export class PlatformHousekeepingIndexes1763900000000 implements MigrationInterface {
  name = 'PlatformHousekeepingIndexes1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX outbox_published_idx ON outbox (published_at) WHERE published_at IS NOT NULL`,
    );
    await q.query(`CREATE INDEX inbox_handled_idx ON inbox (handled_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX inbox_handled_idx`);
    await q.query(`DROP INDEX outbox_published_idx`);
  }
}

/**
 * The relay deletes a row once JetStream has acknowledged it (the stream keeps the event), instead
 * of stamping `published_at` and pruning a day later: an UPDATE of an indexed column wrote a new row
 * version and three index entries per event on the request path's tables. Every remaining row is
 * pending, so the primary key on `seq` is the relay's index; `id` needs no unique index (it is a
 * random GUID, and JetStream de-duplicates by it).
 */
export class PlatformOutboxDeleteOnPublish1764000000000 implements MigrationInterface {
  name = 'PlatformOutboxDeleteOnPublish1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM outbox WHERE published_at IS NOT NULL`);
    await q.query(`DROP INDEX outbox_published_idx`);
    await q.query(`DROP INDEX outbox_pending_idx`);
    await q.query(`ALTER TABLE outbox DROP CONSTRAINT outbox_id_key`);
    await q.query(`ALTER TABLE outbox DROP COLUMN published_at`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN published_at timestamptz`);
    await q.query(`ALTER TABLE outbox ADD CONSTRAINT outbox_id_key UNIQUE (id)`);
    await q.query(`CREATE INDEX outbox_pending_idx ON outbox (seq) WHERE published_at IS NULL`);
    await q.query(
      `CREATE INDEX outbox_published_idx ON outbox (published_at) WHERE published_at IS NOT NULL`,
    );
  }
}

/**
 * Idempotency keys in progress are leased: the process running the request renews `lease_until`
 * while it works, and a key whose lease ran out (its process died, or its clean-up never reached
 * the database) is taken over by the next request with that key instead of answering 409 for a day.
 */
export class PlatformIdempotencyLeases1764700000000 implements MigrationInterface {
  name = 'PlatformIdempotencyLeases1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE idempotency_keys ADD COLUMN lease_owner uuid, ADD COLUMN lease_until timestamptz`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN lease_until, DROP COLUMN lease_owner`);
  }
}

/** The trace context an event was written in, published with it (nullable: an ADD COLUMN without a rewrite). */
export class PlatformOutboxTraceparent1764800000000 implements MigrationInterface {
  name = 'PlatformOutboxTraceparent1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN traceparent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN traceparent`);
  }
}

/**
 * How many times each consumer's handling of an event failed (not how many times it was delivered:
 * a newer event asked again, an ack wait run out or a restart deliver it again without a failure),
 * so an event still failing at EVENT_MAX_FAILURES is set aside as a dead letter.
 */
export class PlatformEventFailures1765400000000 implements MigrationInterface {
  name = 'PlatformEventFailures1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_failures (
        consumer text NOT NULL,
        event_id uuid NOT NULL,
        failures int NOT NULL DEFAULT 1,
        last_failed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, event_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_failures`);
  }
}
