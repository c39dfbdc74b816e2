import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import type { JsMsg } from '@nats-io/jetstream';
import { createEnvelope, type EventEnvelope } from '@byrd/contracts';
import {
  baseConfigSchema,
  dataSourceOptions,
  DUPLICATE_WINDOW_MS,
  ensureEventsStream,
  EventConsumers,
  eventSubjects,
  loadConfig,
  Outbox,
  PermanentEventError,
  runMigrations,
  type EventConsumer,
} from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';
import { runCli } from '../src/cli/main.js';

/** The outbox relay and the inbox-backed consumer against the real PostgreSQL and JetStream. */
describe('outbox and durable consumers', () => {
  let env: TestEnvironment;
  let dataSource: DataSource;
  let outbox: Outbox;
  let consumers: EventConsumers;
  let config: ReturnType<typeof loadConfig<typeof baseConfigSchema>>;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    config = loadConfig(
      baseConfigSchema,
      await env.serviceEnv('platform', { OUTBOX_RELAY_ENABLED: 'false' }),
    );
    await runMigrations({ url: config.DATABASE_URL, entities: [], migrations: [] });
    dataSource = await new DataSource(
      dataSourceOptions({ url: config.DATABASE_URL, entities: [], migrations: [] }),
    ).initialize();
    consumers = new EventConsumers(dataSource, env.nats, config);
    outbox = new Outbox(dataSource, env.nats, config, consumers);
    await dataSource.query('CREATE TABLE effects (event_id uuid PRIMARY KEY)');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await env?.cleanup();
  });

  const event = (orderId = randomUUID()) =>
    createEnvelope('order.created', {
      merchantId: 'm-1',
      referenceIds: [orderId],
      data: {
        orderId,
        orderRef: null,
        status: 'created',
        paymentId: null,
        transactionId: null,
        amount: '1.00',
        currency: 'EUR',
      },
    });

  it('publishes committed rows with msgID = event id, and nothing of a rolled-back transaction', async () => {
    const collector = await env.collect('order.>');
    const committed = await dataSource.transaction((m) => outbox.append(m, event()));
    await dataSource
      .transaction(async (m) => {
        await outbox.append(m, event());
        throw new Error('business rule failed');
      })
      .catch(() => undefined);

    expect(await outbox.pass()).toBe(1);
    const seen = await collector.waitFor((e) => e.id === committed.id);
    expect(seen.msgId).toBe(committed.id);
    expect(seen.envelope).toEqual(committed);
    expect(await outbox.pass()).toBe(0);
    expect(collector.events).toHaveLength(1);
  });

  it('deletes what it published, so every outbox row left is pending', async () => {
    await dataSource.transaction((m) => outbox.append(m, event()));
    expect(await outbox.pass()).toBe(1);
    const left = await dataSource.query('SELECT count(*)::int AS n FROM outbox');
    expect(left[0].n).toBe(0);
  });

  it('lets the stream drop a re-publish of a row sent before a crash but not yet deleted', async () => {
    const collector = await env.collect('order.>');
    const envelope = await dataSource.transaction((m) => outbox.append(m, event()));
    // The relay published, then died before deleting the row: the next pass publishes it again.
    await env.nats.js.publish(env.nats.subject(envelope.type), JSON.stringify(envelope), {
      msgID: envelope.id,
    });
    expect(await outbox.pass()).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(collector.events.filter((e) => e.envelope.id === envelope.id)).toHaveLength(1);
  });

  it('brings an existing events stream to the expected window, retention and copies', async () => {
    const name = `ENSURE_${randomUUID().slice(0, 8)}`;
    const prefix = `${name.toLowerCase()}.`;
    await env.nats.jsm.streams.add({ name, subjects: [`${prefix}order.>`], duplicate_window: 60_000 * 1e6 });
    try {
      await ensureEventsStream(env.nats.jsm, name, prefix, 1);
      const { config } = await env.nats.jsm.streams.info(name);
      expect(config.duplicate_window).toBe(DUPLICATE_WINDOW_MS * 1e6);
      expect(config.max_age).toBe(30 * 24 * 3_600_000 * 1e6);
      expect(config.num_replicas).toBe(1);
      expect(config.subjects).toEqual(expect.arrayContaining(eventSubjects(prefix)));
    } finally {
      await env.nats.jsm.streams.delete(name);
    }
    // More copies than servers: NATS refuses to create it, so the misconfiguration stops the boot.
    await expect(ensureEventsStream(env.nats.jsm, `${name}_R3`, `${prefix}r3.`, 3)).rejects.toThrow(
      /replicas > 1/,
    );
  });

  it('keeps the API key and merchant buckets in as many copies as the events, also a bucket made before', async () => {
    const bucket = `COPIES_${randomUUID().slice(0, 8)}`;
    // More copies than servers: NATS refuses, which shows the copies reach it (one was asked before).
    await expect(env.nats.kv(bucket, 3)).rejects.toThrow(/replicas > 1/);
    await env.nats.kv(bucket);
    try {
      expect((await env.nats.jsm.streams.info(`KV_${bucket}`)).config.num_replicas).toBe(1);
      // A bucket made with one copy is brought to the events' number (this single server takes the
      // update, though it refuses to create a bucket so).
      await env.nats.kv(bucket, 3);
      expect((await env.nats.jsm.streams.info(`KV_${bucket}`)).config.num_replicas).toBe(3);
    } finally {
      await env.nats.jsm.streams.delete(`KV_${bucket}`);
    }
  });

  it('prunes every inbox row older than the stream keeps events, however many, and no other', async () => {
    await dataSource.query(
      `INSERT INTO inbox (event_id, consumer, subject, handled_at)
       SELECT gen_random_uuid(), 'prune', 'order.paid', now() - interval '40 days' FROM generate_series(1, 12000)`,
    );
    await dataSource.query(
      `INSERT INTO inbox (event_id, consumer, subject, handled_at)
       SELECT gen_random_uuid(), 'prune', 'order.paid', now() - interval '29 days' FROM generate_series(1, 10)`,
    );
    expect(await consumers.pruneInbox()).toBe(12000);
    const left = await dataSource.query(`SELECT count(*)::int AS n FROM inbox WHERE consumer = 'prune'`);
    expect(left[0].n).toBe(10);
  });

  describe('consumer', () => {
    const handled: string[] = [];
    let failNext = 0;
    const poisoned = new Set<string>();
    const consumer: EventConsumer = {
      durable: `test-${randomUUID().slice(0, 8)}`,
      subject: 'order.>',
      async handle(envelope: EventEnvelope, manager: EntityManager) {
        await manager.query('INSERT INTO effects (event_id) VALUES ($1)', [envelope.id]);
        if (poisoned.has(envelope.id)) throw new PermanentEventError('order does not exist');
        if (failNext > 0) {
          failNext--;
          throw new Error('database hiccup');
        }
        handled.push(envelope.id);
      },
    };

    /** A stand-in for the JetStream message, recording what the consumer answered. */
    const message = (envelope: unknown, deliveryCount = 1, publishedMsAgo = 0) => {
      const answers: string[] = [];
      const raw = typeof envelope === 'string' ? envelope : JSON.stringify(envelope);
      const msg = {
        subject: 'order.created',
        seq: 1,
        info: { deliveryCount, timestampNanos: (Date.now() - publishedMsAgo) * 1e6 },
        string: () => raw,
        ack: () => answers.push('ack'),
        nak: (delay?: number) => answers.push(`nak:${delay}`),
        term: () => answers.push('term'),
      } as unknown as JsMsg;
      return { msg, answers };
    };
    const effects = async (id: string) =>
      (await dataSource.query('SELECT count(*)::int AS n FROM effects WHERE event_id = $1', [id]))[0]
        .n as number;

    it('handles an event once: a redelivery is acked without running the handler again', async () => {
      const envelope = event();
      const first = message(envelope);
      expect(await consumers.process(consumer, first.msg)).toBe('handled');
      const again = message(envelope, 2);
      expect(await consumers.process(consumer, again.msg)).toBe('duplicate');
      expect(first.answers).toEqual(['ack']);
      expect(again.answers).toEqual(['ack']);
      expect(await effects(envelope.id)).toBe(1);
    });

    it('rolls back and naks with a growing delay on a transient failure, then succeeds', async () => {
      const envelope = event();
      failNext = 1;
      const failed = message(envelope, 3);
      expect(await consumers.process(consumer, failed.msg)).toBe('retry');
      expect(failed.answers).toEqual(['nak:4000']);
      expect(await effects(envelope.id)).toBe(0);

      const retried = message(envelope, 4);
      expect(await consumers.process(consumer, retried.msg)).toBe('handled');
      expect(await effects(envelope.id)).toBe(1);
    });

    it('dead-letters an event whose handling failed EVENT_MAX_FAILURES times: a poison event holds no slot for ever', async () => {
      const envelope = event();
      const flaky: EventConsumer = { ...consumer, durable: `${consumer.durable}-flaky` };
      const lettersOf = () =>
        dataSource.query<{ error: string }[]>('SELECT error FROM dead_letters WHERE consumer = $1', [
          flaky.durable,
        ]);
      const failingOnce = async (deliveryCount: number) => {
        failNext = 1;
        const delivered = message(envelope, deliveryCount);
        return { outcome: await consumers.process(flaky, delivered.msg), answers: delivered.answers };
      };
      expect(config.EVENT_MAX_FAILURES).toBe(25);
      // Delivered often without failing (asked again as a newer event, an ack wait run out): the
      // failures count, not the deliveries.
      expect(await failingOnce(700)).toEqual({ outcome: 'retry', answers: ['nak:60000'] });
      for (let failure = 2; failure < 25; failure += 1)
        expect((await failingOnce(failure)).outcome).toBe('retry');
      expect(await lettersOf()).toEqual([]);

      expect(await failingOnce(25)).toEqual({ outcome: 'dead-lettered', answers: ['term'] });
      expect(await lettersOf()).toEqual([{ error: 'failed 25 times, the last: Error: database hiccup' }]);
      expect(await effects(envelope.id)).toBe(0);
      const counts = await dataSource.query('SELECT * FROM event_failures WHERE consumer = $1', [
        flaky.durable,
      ]);
      expect(counts).toEqual([]); // a replay starts counting anew
    });

    it('acks events the consumer does not accept without touching the database', async () => {
      const envelope = event();
      const picky: EventConsumer = { ...consumer, accepts: (e) => e.id !== envelope.id };
      const skipped = message(envelope);
      expect(await consumers.process(picky, skipped.msg)).toBe('skipped');
      expect(skipped.answers).toEqual(['ack']);
      expect(await effects(envelope.id)).toBe(0);
      const inbox = await dataSource.query('SELECT count(*)::int AS n FROM inbox WHERE event_id = $1', [
        envelope.id,
      ]);
      expect(inbox[0].n).toBe(0);
    });

    it('terminates and dead-letters a message that can never succeed', async () => {
      const poison = event();
      poisoned.add(poison.id);
      const bad = message(poison);
      expect(await consumers.process(consumer, bad.msg)).toBe('dead-lettered');
      const garbage = message('{not json');
      expect(await consumers.process(consumer, garbage.msg)).toBe('dead-lettered');
      // A NUL byte, which a PostgreSQL text column refuses: set aside all the same, not asked again.
      const nul = message('{\u0000}');
      expect(await consumers.process(consumer, nul.msg)).toBe('dead-lettered');
      expect(bad.answers).toEqual(['term']);
      expect(garbage.answers).toEqual(['term']);
      expect(nul.answers).toEqual(['term']);
      const letters = await dataSource.query(
        'SELECT payload, error FROM dead_letters WHERE consumer = $1 ORDER BY id',
        [consumer.durable],
      );
      expect(letters).toHaveLength(3);
      expect(letters[2].payload).toBe('{\uFFFD}');
      expect(letters[0].error).toContain('order does not exist');
      expect(await effects(poison.id)).toBe(0);
    });

    it('asks again, for an hour after it was published, an event this version does not know by name (a newer producer), then dead-letters it', async () => {
      // A rolling upgrade: a new producer's event reaches a replica still on the version before.
      const newer = { ...event(), type: 'order.partiallyshipped' };
      const lettersOf = async () =>
        (
          await dataSource.query('SELECT count(*)::int AS n FROM dead_letters WHERE payload LIKE $1', [
            `%${newer.id}%`,
          ])
        )[0].n as number;
      const first = message(newer);
      expect(await consumers.process(consumer, first.msg)).toBe('retry');
      expect(first.answers).toEqual(['nak:5000']);
      expect(await lettersOf()).toBe(0);
      const last = message(newer, 700, 2 * 3_600_000);
      expect(await consumers.process(consumer, last.msg)).toBe('dead-lettered');
      expect(last.answers).toEqual(['term']);
      expect(await lettersOf()).toBe(1);
    });

    it('asks again, for an hour, an event carrying a value this version does not know (a status, a return code), and dead-letters a malformed one at once', async () => {
      // The same upgrade: a known event with a status or code the new producer added.
      const newer = event();
      const withNewStatus = { ...newer, data: { ...newer.data, status: 'onhold' } };
      const malformed = event();
      const withBadStatus = { ...malformed, data: { ...malformed.data, status: 'on hold!' } };
      const lettersOf = async (id: string) =>
        (
          await dataSource.query('SELECT count(*)::int AS n FROM dead_letters WHERE payload LIKE $1', [
            `%${id}%`,
          ])
        )[0].n as number;
      const first = message(withNewStatus);
      expect(await consumers.process(consumer, first.msg)).toBe('retry');
      expect(first.answers).toEqual(['nak:5000']);
      expect(await lettersOf(newer.id)).toBe(0);
      const last = message(withNewStatus, 700, 2 * 3_600_000);
      expect(await consumers.process(consumer, last.msg)).toBe('dead-lettered');
      expect(await lettersOf(newer.id)).toBe(1);

      const bad = message(withBadStatus);
      expect(await consumers.process(consumer, bad.msg)).toBe('dead-lettered');
      expect(bad.answers).toEqual(['term']);
      expect(await lettersOf(malformed.id)).toBe(1);
    });

    it('consumes from the stream durably and acks after commit', async () => {
      consumers.register(consumer);
      await consumers.onApplicationBootstrap();
      const envelope = await dataSource.transaction((m) => outbox.append(m, event()));
      await outbox.pass();
      const deadline = Date.now() + 10_000;
      while (!handled.includes(envelope.id) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(handled).toContain(envelope.id);
      await consumers.beforeApplicationShutdown();
      const info = await env.nats.jsm.consumers.info(env.streamName, consumer.durable);
      expect(info.num_ack_pending).toBe(0);
    });
  });
  it('creates a durable consumer again when it disappears while running, and goes on consuming', async () => {
    // An operator's delete, or a broker back without its store: the library would only ask for it
    // again and again, so this replica (and every other) would stop consuming until restarted.
    const gone = new EventConsumers(dataSource, env.nats, config);
    const seen = new Set<string>();
    const durable = `test-gone-${randomUUID().slice(0, 8)}`;
    gone.register({
      durable,
      subject: 'order.>',
      async handle(envelope: EventEnvelope) {
        seen.add(envelope.id);
      },
    });
    await gone.onApplicationBootstrap();
    try {
      await env.nats.jsm.consumers.delete(env.streamName, durable);
      const envelope = await dataSource.transaction((m) => outbox.append(m, event()));
      await outbox.pass();
      const deadline = Date.now() + 15_000;
      while (!seen.has(envelope.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(seen.has(envelope.id)).toBe(true);
      expect((await env.nats.jsm.consumers.info(env.streamName, durable)).config.durable_name).toBe(durable);
    } finally {
      await gone.beforeApplicationShutdown();
    }
  });

  it('replays a dead letter once its cause is fixed (npm run cli -- dead-letters replay): only the consumer that set it aside handles it', async () => {
    const replaying = new EventConsumers(dataSource, env.nats, config);
    const handledBy = { fussy: [] as string[], easy: [] as string[] };
    let broken = true;
    const suffix = randomUUID().slice(0, 8);
    replaying.register({
      durable: `test-fussy-${suffix}`,
      subject: 'order.>',
      async handle(envelope: EventEnvelope) {
        if (broken) throw new PermanentEventError('a bug of this version');
        handledBy.fussy.push(envelope.id);
      },
    });
    replaying.register({
      durable: `test-easy-${suffix}`,
      subject: 'order.>',
      async handle(envelope: EventEnvelope) {
        handledBy.easy.push(envelope.id);
      },
    });
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const cliEnv = {
        NATS_URL: config.NATS_URL,
        EVENTS_STREAM: config.EVENTS_STREAM,
        NATS_SUBJECT_PREFIX: config.NATS_SUBJECT_PREFIX,
        DATABASE_URL: config.DATABASE_URL,
      };
      const code = await runCli(argv, cliEnv, { log: (l) => out.push(l), error: (l) => err.push(l) });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const until = async (done: () => Promise<boolean> | boolean) => {
      const deadline = Date.now() + 15_000;
      while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    // The durables start from the stream's first event: the earlier tests' events reach them too.
    const envelope = await dataSource.transaction((m) => outbox.append(m, event()));
    const letters = () =>
      dataSource.query<{ id: string }[]>(
        'SELECT id FROM dead_letters WHERE consumer = $1 AND payload LIKE $2',
        [`test-fussy-${suffix}`, `%${envelope.id}%`],
      );
    const timesHandled = (by: string[]) => by.filter((id) => id === envelope.id).length;
    await replaying.onApplicationBootstrap();
    try {
      await outbox.pass();
      await until(async () => (await letters()).length === 1 && handledBy.easy.includes(envelope.id));
      const [letter] = await letters();
      expect(letter).toBeDefined();
      const listed = await cli('dead-letters', 'list', '--json');
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.out)).toContainEqual(
        expect.objectContaining({ id: letter.id, error: 'PermanentEventError: a bug of this version' }),
      );

      broken = false;
      // Replayed after the other consumer's inbox forgot the event (it keeps 31 days, letters stay).
      await dataSource.query('DELETE FROM inbox WHERE consumer = $1', [`test-easy-${suffix}`]);
      expect(await cli('dead-letters', 'replay', letter.id)).toMatchObject({
        code: 0,
        out: expect.stringContaining(`Replayed 1: ${letter.id}`),
      });
      await until(() => handledBy.fussy.includes(envelope.id));
      expect(timesHandled(handledBy.fussy)).toBe(1);
      expect(await letters()).toEqual([]);
      // The other consumer acknowledged the replay (the stream's last message) without handling it.
      const replayed = (await env.nats.jsm.streams.info(env.streamName)).state.last_seq;
      const easyAcked = async () =>
        (await env.nats.jsm.consumers.info(env.streamName, `test-easy-${suffix}`)).ack_floor.stream_seq;
      await until(async () => (await easyAcked()) >= replayed);
      expect(await easyAcked()).toBeGreaterThanOrEqual(replayed);
      expect(timesHandled(handledBy.easy)).toBe(1);
      expect(await cli('dead-letters', 'replay', letter.id)).toMatchObject({ code: 1 });
    } finally {
      await replaying.beforeApplicationShutdown();
    }
  });

  describe('batch consumer', () => {
    const batches: string[][] = [];
    const poisoned = new Set<string>();
    const batchConsumer: EventConsumer = {
      durable: `batch-${randomUUID().slice(0, 8)}`,
      subject: 'order.>',
      handle: (envelope, manager) => batchConsumer.handleBatch!([envelope], manager),
      async handleBatch(envelopes: EventEnvelope[], manager: EntityManager) {
        batches.push(envelopes.map((e) => e.id));
        for (const envelope of envelopes) {
          await manager.query('INSERT INTO effects (event_id) VALUES ($1)', [envelope.id]);
          if (poisoned.has(envelope.id)) throw new PermanentEventError('order does not exist');
        }
      },
    };
    const message = (envelope: EventEnvelope) => {
      const answers: string[] = [];
      const msg = {
        subject: 'order.created',
        seq: 1,
        info: { deliveryCount: 1 },
        string: () => JSON.stringify(envelope),
        ack: () => answers.push('ack'),
        nak: (delay?: number) => answers.push(`nak:${delay}`),
        term: () => answers.push('term'),
      } as unknown as JsMsg;
      return { msg, answers };
    };
    const effects = async (ids: string[]) =>
      (
        await dataSource.query<{ n: number }[]>(
          'SELECT count(*)::int AS n FROM effects WHERE event_id = ANY($1::uuid[])',
          [ids],
        )
      )[0].n;

    it('handles a burst in one transaction, each event once, and acks them after commit', async () => {
      const [a, b, c] = [event(), event(), event()];
      const sent = [message(a), message(b), message(c), message(a)]; // a redelivered within the burst
      batches.length = 0;
      await consumers.processBatch(
        batchConsumer,
        sent.map((s) => s.msg),
      );
      expect(batches).toEqual([[a.id, b.id, c.id]]);
      expect(sent.map((s) => s.answers)).toEqual([['ack'], ['ack'], ['ack'], ['ack']]);
      expect(await effects([a.id, b.id, c.id])).toBe(3);

      const again = message(b);
      await consumers.processBatch(batchConsumer, [again.msg, message(event()).msg]);
      expect(again.answers).toEqual(['ack']);
      expect(await effects([b.id])).toBe(1);
    });

    it('falls back to one by one when a batch fails, so only the bad event is dead-lettered', async () => {
      const [good, poison, later] = [event(), event(), event()];
      poisoned.add(poison.id);
      const sent = [message(good), message(poison), message(later)];
      await consumers.processBatch(
        batchConsumer,
        sent.map((s) => s.msg),
      );
      expect(sent.map((s) => s.answers)).toEqual([['ack'], ['term'], ['ack']]);
      expect(await effects([good.id, later.id])).toBe(2);
      expect(await effects([poison.id])).toBe(0);
    });

    it('takes what arrived together from the stream as one batch', async () => {
      const fresh = new EventConsumers(
        dataSource,
        env.nats,
        loadConfig(baseConfigSchema, await env.serviceEnv('platform')),
      );
      fresh.register(batchConsumer);
      await fresh.onApplicationBootstrap();
      batches.length = 0;
      const burst = await dataSource.transaction(async (m) => {
        const envelopes = [];
        for (let i = 0; i < 50; i++) envelopes.push(await outbox.append(m, event()));
        return envelopes;
      });
      await outbox.pass();
      const ids = burst.map((e) => e.id);
      const deadline = Date.now() + 10_000;
      while ((await effects(ids)) < ids.length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      await fresh.stop();
      expect(await effects(ids)).toBe(50);
      const seen = batches.flat().filter((id) => ids.includes(id));
      expect(new Set(seen).size).toBe(50);
      expect(seen).toHaveLength(50);
      // Fewer transactions than events: the burst was not handled one commit per event.
      expect(batches.length).toBeLessThan(50);
    });
  });
});
