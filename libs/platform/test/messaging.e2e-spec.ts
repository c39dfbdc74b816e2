import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import type { JsMsg } from '@nats-io/jetstream';
import { createEnvelope, type EventEnvelope } from '@byrd/contracts';
import {
  baseConfigSchema,
  dataSourceOptions,
  EventConsumers,
  loadConfig,
  Outbox,
  PermanentEventError,
  runMigrations,
  type EventConsumer,
} from '@byrd/platform';
import { TestEnvironment } from '@byrd/platform/testing';

/** The outbox relay and the inbox-backed consumer against the real PostgreSQL and JetStream. */
describe('outbox and durable consumers', () => {
  let env: TestEnvironment;
  let dataSource: DataSource;
  let outbox: Outbox;
  let consumers: EventConsumers;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const config = loadConfig(
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

  it('lets the stream drop a re-publish of a row sent before a crash but not marked sent', async () => {
    const collector = await env.collect('order.>');
    const envelope = await dataSource.transaction((m) => outbox.append(m, event()));
    // The relay published, then died before marking the row: the next pass publishes it again.
    await env.nats.js.publish(env.nats.subject(envelope.type), JSON.stringify(envelope), {
      msgID: envelope.id,
    });
    expect(await outbox.pass()).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(collector.events.filter((e) => e.envelope.id === envelope.id)).toHaveLength(1);
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
    const message = (envelope: unknown, deliveryCount = 1) => {
      const answers: string[] = [];
      const raw = typeof envelope === 'string' ? envelope : JSON.stringify(envelope);
      const msg = {
        subject: 'order.created',
        seq: 1,
        info: { deliveryCount },
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
      expect(bad.answers).toEqual(['term']);
      expect(garbage.answers).toEqual(['term']);
      const letters = await dataSource.query(
        'SELECT payload, error FROM dead_letters WHERE consumer = $1 ORDER BY id',
        [consumer.durable],
      );
      expect(letters).toHaveLength(2);
      expect(letters[0].error).toContain('order does not exist');
      expect(await effects(poison.id)).toBe(0);
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
});
