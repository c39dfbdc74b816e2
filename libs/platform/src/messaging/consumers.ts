import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  type JsMsg,
} from '@nats-io/jetstream';
import { DataSource, type EntityManager } from 'typeorm';
import { EnvelopeError, isEventName, parseEnvelope, type EventEnvelope } from '@byrd/contracts';
import type { BaseConfig } from '../config/config.js';
import type { NatsContext } from './nats.js';
import { NATS_CONTEXT, PLATFORM_CONFIG } from './tokens.js';
import {
  contextFromHeaders,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceparentOf,
  withSpan,
  type Span,
} from '../tracing/tracing.js';

/** A message that can never be handled (malformed, unknown reference): terminated and dead-lettered. */
export class PermanentEventError extends Error {
  override name = 'PermanentEventError';
}

export interface EventConsumer {
  /** Durable consumer name; unique per service and purpose. */
  readonly durable: string;
  /** An event name or wildcard, without the run prefix (e.g. `transaction.>`; `>` for every event). */
  readonly subject: string;
  /**
   * Whether this event concerns the consumer at all; others are acked without opening a database
   * transaction (e.g. orders ignores payments that belong to no order).
   */
  accepts?(envelope: EventEnvelope): boolean;
  /** Runs inside the transaction that also records the event in the inbox. */
  handle(envelope: EventEnvelope, manager: EntityManager): Promise<void>;
  /**
   * Optional: handles several events in one transaction (with their inbox rows), in the order they
   * arrived. When present, the messages already received are taken together, up to `batchSize`
   * (100), so a burst costs one commit instead of one per event. Only for consumers whose events
   * do not depend on each other's outcome; if the batch fails, its events are retried one by one
   * through `handle`, so one bad event cannot hold back the others.
   */
  handleBatch?(envelopes: EventEnvelope[], manager: EntityManager): Promise<void>;
  /** Most events per `handleBatch` call. */
  readonly batchSize?: number;
  /** Runs after commit (e.g. to wake the outbox relay). */
  afterCommit?(envelope: EventEnvelope): void;
}

/** The trace context each event of a batch is handled in (`handlingTraceparent`). */
const HANDLING_TRACE = new WeakMap<EventEnvelope, string | null>();

/**
 * The `traceparent` of the span handling this event: what a batch handler stores beside the rows
 * it writes for it (one handler call serves events of many traces). In a one-by-one handler the
 * span is current, and this is the same as `traceparentOf()`.
 */
export function handlingTraceparent(envelope: EventEnvelope): string | null {
  return HANDLING_TRACE.get(envelope) ?? traceparentOf();
}

function endHandlingSpan(span: Span, outcome: HandleOutcome): void {
  span.setAttribute('byrd.event.outcome', outcome);
  if (outcome === 'dead-lettered' || outcome === 'retry') {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  }
  span.end();
}
const INBOX_RETENTION = '31 days'; // the EVENTS stream keeps 30
const INBOX_PRUNE_EVERY_MS = 3_600_000;
const INBOX_PRUNE_BATCH = 5_000;
const MAX_NAK_DELAY_MS = 60_000;
/**
 * An event this build does not know by name (a newer producer's, during a rolling upgrade) is asked
 * again every NEWER_EVENT_RETRY_MS, for a replica that knows it, until it is this old; then it is
 * dead-lettered. A short wait: while it waits it holds one of the durable's unacknowledged slots,
 * and the replicas that know it take it within seconds of starting.
 */
const NEWER_EVENT_RETRY_MS = 5_000;
const NEWER_EVENT_MAX_AGE_MS = 3_600_000;
const EVENT_NAME_SHAPE = /^[a-z]+(\.[a-z0-9]+)+$/;
const DEFAULT_BATCH_SIZE = 100;
/** Messages a durable's pull asks for at a time (`consume({ max_messages })`). */
const PULL_BATCH = 100;
/**
 * Messages a one-by-one consumer takes in at once: enough for a burst's acks to leave together,
 * few beside the library's own pull, so a slow handler's messages do not wait past their ack_wait.
 */
const READ_AHEAD = 25;
/** Header of a dead letter published again (`dead-letters replay`): only the consumer it names handles it. */
export const REPLAY_FOR_HEADER = 'Byrd-Replay-For';
/** Between tries to pull from a durable created again while the broker is not answering yet. */
const RESTART_DELAY_MS = 1_000;

export type HandleOutcome = 'handled' | 'skipped' | 'duplicate' | 'dead-lettered' | 'retry';

/** Where a durable consumer stands in the stream. */
export interface ConsumerLag {
  durable: string;
  /** In the stream, not yet delivered. */
  pending: number;
  /** Delivered, not yet acknowledged. */
  ackPending: number;
  /** Delivered more than once, not yet acknowledged. */
  redelivered: number;
}

/** The durable's settings, as created at boot and again when it is gone. */
type DurableSettings = Partial<ConsumerConfig> & {
  durable_name: string;
  filter_subject: string;
  ack_wait: number;
  max_ack_pending: number;
};

/**
 * Runs durable pull consumers on the EVENTS stream. A message is acked only after its transaction
 * commits; the inbox row written in that transaction makes a redelivery a no-op. Failures are nak'ed
 * with a growing delay; permanent ones, and one whose handling failed EVENT_MAX_FAILURES
 * times, are terminated and dead-lettered (kept in `dead_letters` until replayed).
 */
@Injectable()
export class EventConsumers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(EventConsumers.name);
  private readonly consumers: EventConsumer[] = [];
  private readonly running: { messages: ConsumerMessages; loop: Promise<void> }[] = [];
  readonly counters = { handled: 0, duplicates: 0, deadLettered: 0, retried: 0 };
  private pruneTimer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(PLATFORM_CONFIG) private readonly config: BaseConfig,
  ) {}

  register(consumer: EventConsumer): void {
    this.consumers.push(consumer);
  }

  /** Each durable consumer's lag as the stream sees it (for the metrics). */
  lag(): Promise<ConsumerLag[]> {
    return Promise.all(
      this.consumers.map(async ({ durable }) => {
        const info = await this.nats.jsm.consumers.info(this.config.EVENTS_STREAM, durable);
        return {
          durable,
          pending: info.num_pending,
          ackPending: info.num_ack_pending,
          redelivered: info.num_redelivered,
        };
      }),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const consumer of this.consumers) await this.start(consumer);
    this.pruneTimer = setInterval(() => void this.pruneInbox(), INBOX_PRUNE_EVERY_MS).unref();
  }

  /**
   * Inbox rows only need to outlive the stream's own retention (a redelivery can't be older), so
   * older ones are removed, every one of them, in batches of short statements (a busy hour adds far
   * more rows than any fixed number per run would remove). Returns how many.
   */
  async pruneInbox(): Promise<number> {
    let removed = 0;
    try {
      for (;;) {
        const [{ n }] = await this.dataSource.query<{ n: number }[]>(
          `WITH gone AS (
             DELETE FROM inbox WHERE (consumer, event_id) IN (
               SELECT consumer, event_id FROM inbox WHERE handled_at < now() - interval '${INBOX_RETENTION}'
                LIMIT ${INBOX_PRUNE_BATCH})
             RETURNING 1)
           SELECT count(*)::int AS n FROM gone`,
        );
        removed += n;
        if (n < INBOX_PRUNE_BATCH || this.stopping) break;
      }
      // Failure counts of events handled or set aside since: as old as the inbox keeps.
      await this.dataSource.query(
        `DELETE FROM event_failures WHERE last_failed_at < now() - interval '${INBOX_RETENTION}'`,
      );
      return removed;
    } catch (error) {
      this.logger.warn(`Inbox prune failed: ${String(error)}`);
      return removed;
    }
  }

  private stopping?: Promise<void>;

  /** Stops pulling, lets the message in hand finish (and be acked), then returns. Idempotent. */
  stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    this.stopping ??= (async () => {
      await Promise.all(this.running.map(({ messages }) => messages.close()));
      await Promise.all(this.running.map(({ loop }) => loop));
      this.running.length = 0;
    })();
    return this.stopping;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  private async start(consumer: EventConsumer): Promise<void> {
    const stream = this.config.EVENTS_STREAM;
    const settings: DurableSettings = {
      durable_name: consumer.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: this.config.EVENT_ACK_WAIT_MS * 1_000_000,
      max_ack_pending: 1_000,
      // One filter subject: multi-filter consumers need NATS 2.10, and Debian 12 ships 2.9.
      filter_subject: this.nats.subject(consumer.subject),
    };
    try {
      await this.nats.jsm.consumers.add(stream, settings);
    } catch (error) {
      // Exists with other settings (e.g. a new filter after an upgrade): bring it up to date.
      const exists = await this.nats.jsm.consumers.info(stream, consumer.durable).catch(() => null);
      if (!exists) throw error;
      await this.nats.jsm.consumers.update(stream, consumer.durable, {
        filter_subject: settings.filter_subject,
        ack_wait: settings.ack_wait,
        max_ack_pending: settings.max_ack_pending,
      });
    }
    await this.consume(consumer, settings);
    this.logger.log(`Consuming ${settings.filter_subject} as ${consumer.durable}`);
  }

  /** Pulls the durable's messages into the consumer's loop until stopped, or until the durable is gone. */
  private async consume(consumer: EventConsumer, settings: DurableSettings): Promise<void> {
    const stream = this.config.EVENTS_STREAM;
    const messages = await (
      await this.nats.js.consumers.get(stream, consumer.durable)
    ).consume({ max_messages: PULL_BATCH });
    if (this.stopping) return void (await messages.close()); // stopped while this one was starting
    const loop = (
      consumer.handleBatch ? this.batchLoop(consumer, messages) : this.oneByOne(consumer, messages)
    ).catch((error: unknown) => this.logger.error(`Consumer ${consumer.durable} stopped: ${String(error)}`));
    const entry = { messages, loop };
    this.running.push(entry);
    void this.recreateWhenGone(consumer, settings, entry).catch((error: unknown) =>
      this.logger.error(`Consumer ${consumer.durable} not watched for its durable: ${String(error)}`),
    );
  }

  /**
   * A durable deleted under a running replica (by an operator, or a broker back without its store)
   * is only asked for again by the library, at its heartbeat's pace, and never created: every
   * replica would stop consuming until restarted. It is created again instead, as at boot (from the
   * stream's start: the inbox makes every event already handled a no-op), and pulled from anew; the
   * messages in hand were the old durable's, so their acks are lost and the new one delivers them.
   */
  private async recreateWhenGone(
    consumer: EventConsumer,
    settings: DurableSettings,
    entry: { messages: ConsumerMessages; loop: Promise<void> },
  ): Promise<void> {
    for await (const status of entry.messages.status()) {
      if (status.type !== 'consumer_deleted' && status.type !== 'consumer_not_found') continue;
      if (this.stopping) return;
      try {
        await this.nats.jsm.consumers.add(this.config.EVENTS_STREAM, settings);
      } catch (error) {
        this.logger.warn(`Consumer ${consumer.durable} is gone and could not be created: ${String(error)}`);
        continue; // the library asks again, and tells us again
      }
      this.logger.warn(`Consumer ${consumer.durable} was gone (${status.type}): created again`);
      await entry.messages.close().catch(() => undefined);
      await entry.loop;
      this.running.splice(this.running.indexOf(entry), 1);
      // Pulled from anew, however long the broker takes to answer (it may be just back).
      while (!this.stopping) {
        try {
          return await this.consume(consumer, settings);
        } catch (error) {
          this.logger.warn(`Consumer ${consumer.durable} could not start again: ${String(error)}`);
          await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
        }
      }
      return;
    }
  }

  /**
   * Everything that arrived since the last turn, one message at a time. Those the consumer skips are
   * acked without a wait between them, so a burst of them leaves in one socket write (nats.js sends
   * what was queued in one microtask turn together; read one by one, each ack was a write of its own,
   * and those writes were most of orders' CPU on payments without an order).
   */
  private async oneByOne(consumer: EventConsumer, messages: ConsumerMessages): Promise<void> {
    const handleEach = async (arrived: JsMsg[]) => {
      for (const message of arrived) {
        const triaged = this.triage(consumer, message);
        if (triaged !== SKIPPED) await this.handleTriaged(consumer, message, triaged);
      }
    };
    await eachArrival(messages, READ_AHEAD, handleEach, READ_AHEAD);
  }

  /**
   * Whenever the previous batch has committed, all that arrived meanwhile (up to batchSize) are
   * handled together. What waits is bounded by the consumer's max_ack_pending: nothing is acked
   * before its batch commits.
   */
  private async batchLoop(consumer: EventConsumer, messages: ConsumerMessages): Promise<void> {
    const size = consumer.batchSize ?? DEFAULT_BATCH_SIZE;
    await eachArrival(messages, size, (arrived) => this.processBatch(consumer, arrived), Infinity);
  }

  /** Handles messages in one transaction; on failure, one by one (see `handleBatch`). */
  async processBatch(consumer: EventConsumer, messages: JsMsg[]): Promise<void> {
    const handleBatch = consumer.handleBatch?.bind(consumer);
    if (!handleBatch || messages.length === 1) {
      for (const message of messages) await this.process(consumer, message);
      return;
    }
    const batch: { message: JsMsg; envelope: EventEnvelope }[] = [];
    for (const message of messages) {
      const triaged = this.triage(consumer, message);
      if (triaged === SKIPPED) continue;
      if ('unreadable' in triaged) await this.unreadable(consumer, message, triaged.unreadable);
      else batch.push({ message, envelope: triaged.envelope });
    }
    if (batch.length === 0) return;
    // One span per event, each the child of its own producer's: the batch shares only a commit.
    const spans = batch.map(({ message, envelope }) => {
      const span = this.handlingSpan(consumer, message, envelope);
      HANDLING_TRACE.set(envelope, traceparentOf(span));
      return span;
    });
    let fresh: EventEnvelope[];
    try {
      fresh = await this.dataSource.transaction(async (manager) => {
        const inserted: { event_id: string }[] = await manager.query(
          `INSERT INTO inbox (consumer, event_id, subject)
           SELECT $1, event_id, subject FROM unnest($2::uuid[], $3::text[]) AS e(event_id, subject)
           ON CONFLICT DO NOTHING RETURNING event_id`,
          [consumer.durable, batch.map((b) => b.envelope.id), batch.map((b) => b.envelope.type)],
        );
        const unseen = new Set(inserted.map((row) => row.event_id));
        // An event redelivered within the same batch is handled once.
        const envelopes = batch.map((b) => b.envelope).filter((envelope) => unseen.delete(envelope.id));
        if (envelopes.length > 0) await handleBatch(envelopes, manager);
        return envelopes;
      });
    } catch (error) {
      this.logger.warn(
        `${consumer.durable}: a batch of ${batch.length} failed (${String(error)}); handling them one by one`,
      );
      for (const span of spans) endHandlingSpan(span, 'retry');
      for (const { message } of batch) await this.process(consumer, message);
      return;
    }
    for (const { message } of batch) message.ack();
    const freshIds = new Set(fresh.map((envelope) => envelope.id));
    spans.forEach((span, i) =>
      endHandlingSpan(span, freshIds.has(batch[i].envelope.id) ? 'handled' : 'duplicate'),
    );
    this.counters.handled += fresh.length;
    this.counters.duplicates += batch.length - fresh.length;
    for (const envelope of fresh) consumer.afterCommit?.(envelope);
  }

  async process(consumer: EventConsumer, message: JsMsg): Promise<HandleOutcome> {
    const triaged = this.triage(consumer, message);
    return triaged === SKIPPED ? 'skipped' : this.handleTriaged(consumer, message, triaged);
  }

  /**
   * What a message is to the consumer, at once (no wait): one it skips (another consumer's replayed
   * dead letter, or an event it does not accept) is acked here and SKIPPED; else its envelope, or
   * why it cannot be read.
   */
  private triage(consumer: EventConsumer, message: JsMsg): Triaged | typeof SKIPPED {
    if (replayedForAnother(consumer, message)) {
      message.ack();
      return SKIPPED;
    }
    let envelope: EventEnvelope;
    try {
      envelope = parseEnvelope(JSON.parse(message.string()));
    } catch (error) {
      return { unreadable: error };
    }
    if (consumer.accepts && !consumer.accepts(envelope)) {
      message.ack();
      return SKIPPED;
    }
    return { envelope };
  }

  private async handleTriaged(
    consumer: EventConsumer,
    message: JsMsg,
    triaged: Triaged,
  ): Promise<HandleOutcome> {
    if ('unreadable' in triaged) return this.unreadable(consumer, message, triaged.unreadable);
    const { envelope } = triaged;
    const span = this.handlingSpan(consumer, message, envelope);
    const outcome = await withSpan(span, () => this.handleOne(consumer, message, envelope));
    endHandlingSpan(span, outcome);
    return outcome;
  }

  private async handleOne(
    consumer: EventConsumer,
    message: JsMsg,
    envelope: EventEnvelope,
  ): Promise<HandleOutcome> {
    try {
      const fresh = await this.dataSource.transaction(async (manager) => {
        const inserted: unknown[] = await manager.query(
          `INSERT INTO inbox (consumer, event_id, subject) VALUES ($1, $2, $3)
           ON CONFLICT DO NOTHING RETURNING event_id`,
          [consumer.durable, envelope.id, envelope.type],
        );
        if (inserted.length === 0) return false;
        await consumer.handle(envelope, manager);
        return true;
      });
      message.ack();
      if (!fresh) {
        this.counters.duplicates++;
        return 'duplicate';
      }
      this.counters.handled++;
      consumer.afterCommit?.(envelope);
      return 'handled';
    } catch (error) {
      if (error instanceof PermanentEventError) return this.deadLetter(consumer, message, error, envelope.id);
      const failures = await this.countFailure(consumer, envelope);
      if (failures >= this.config.EVENT_MAX_FAILURES) {
        // A poison event: set aside (replayed with `npm run cli -- dead-letters replay` once fixed).
        const lastError = `failed ${failures} times, the last: ${String(error)}`;
        return this.deadLetter(consumer, message, lastError, envelope.id);
      }
      const delay = Math.min(1_000 * 2 ** Math.min(message.info.deliveryCount - 1, 6), MAX_NAK_DELAY_MS);
      this.logger.warn(
        `${consumer.durable}: ${message.subject} failed (${String(error)}); retry in ${delay} ms`,
      );
      message.nak(delay);
      this.counters.retried++;
      return 'retry';
    }
  }

  /** A consumer span for one event, child of the context its producer sent in the message headers. */
  private handlingSpan(consumer: EventConsumer, message: JsMsg, envelope: EventEnvelope): Span {
    return startSpan(`${envelope.type} process`, SpanKind.CONSUMER, contextFromHeaders(message.headers), {
      'messaging.system': 'nats',
      'messaging.operation.type': 'process',
      'messaging.destination.name': envelope.type,
      'messaging.consumer.group.name': consumer.durable,
      'messaging.message.id': envelope.id,
      'messaging.message.delivery_count': message.info.deliveryCount,
    });
  }

  /**
   * A message this build cannot read: dead-lettered, unless it names an event this build does not
   * know yet, or carries values (a return code, a status, a payment method) it does not know yet: a
   * newer producer's, during a rolling upgrade. That one is asked again for a while, since
   * terminating it would lose it for the replicas that know it.
   */
  private async unreadable(consumer: EventConsumer, message: JsMsg, error: unknown): Promise<HandleOutcome> {
    const ageMs = Date.now() - message.info.timestampNanos / 1e6;
    const newer = namesNewerEvent(message)
      ? 'names an event'
      : error instanceof EnvelopeError && error.onlyUnknownValues
        ? `carries values (${error.issues.join('; ')})`
        : null;
    if (!newer || ageMs >= NEWER_EVENT_MAX_AGE_MS) return this.deadLetter(consumer, message, error);
    this.logger.warn(
      `${consumer.durable}: ${message.subject} seq ${message.seq} ${newer} this version does not know; ` +
        `asked again in ${NEWER_EVENT_RETRY_MS} ms (published ${Math.round(ageMs / 1000)} s ago)`,
    );
    message.nak(NEWER_EVENT_RETRY_MS);
    this.counters.retried++;
    return 'retry';
  }

  /**
   * Counts one more failure of the consumer's handling of the event, in a statement of its own (the
   * handler's transaction rolled back); 0 when it cannot be counted (the database is away, and then
   * nothing can be set aside either).
   */
  private async countFailure(consumer: EventConsumer, envelope: EventEnvelope): Promise<number> {
    try {
      const [row] = await this.dataSource.query<{ failures: number }[]>(
        `INSERT INTO event_failures (consumer, event_id) VALUES ($1, $2)
         ON CONFLICT (consumer, event_id)
         DO UPDATE SET failures = event_failures.failures + 1, last_failed_at = now()
         RETURNING failures`,
        [consumer.durable, envelope.id],
      );
      return row.failures;
    } catch {
      return 0;
    }
  }

  /**
   * Terminates the message and keeps it in `dead_letters` (its failure count goes: a replay starts
   * anew). What it cannot record (the database away) it leaves in the stream, asked again later.
   */
  private async deadLetter(
    consumer: EventConsumer,
    message: JsMsg,
    error: unknown,
    eventId: string | null = null,
  ): Promise<HandleOutcome> {
    this.logger.error(
      `${consumer.durable}: dead letter ${message.subject} seq ${message.seq}: ${String(error)}`,
    );
    try {
      await this.dataSource.query(
        `WITH counted AS (DELETE FROM event_failures WHERE consumer = $1 AND event_id = $5)
         INSERT INTO dead_letters (consumer, subject, payload, error) VALUES ($1, $2, $3, $4)`,
        [consumer.durable, message.subject, storable(message.string()), storable(String(error)), eventId],
      );
    } catch (saveError) {
      // Not recorded: leave the message in the stream and try again later rather than lose it.
      message.nak(MAX_NAK_DELAY_MS);
      this.logger.error(`Could not record dead letter: ${String(saveError)}`);
      return 'retry';
    }
    // No reason: NATS 2.9 ignores a `+TERM <reason>` (2.10 reads it), so the message would come back
    // after ack_wait and be set aside again and again. The reason is in dead_letters and the log.
    message.term();
    this.counters.deadLettered++;
    return 'dead-lettered';
  }
}

const SKIPPED = Symbol('skipped');
/** A message the consumer handles: its envelope, or why it cannot be read. */
type Triaged = { envelope: EventEnvelope } | { unreadable: unknown };

/**
 * Reads the messages as they arrive and calls `handle` with all that arrived (at most `most` at a
 * time) whenever the previous call has finished, until the messages end. Reading waits while
 * `capacity` messages are queued or being handled (the library pulls more as they are read), so a
 * slow handler holds few more messages, their ack_wait running, than reading one at a time did.
 * When `handle` fails, reading stops (as leaving a `for await` does), and the failure is thrown.
 */
async function eachArrival(
  messages: ConsumerMessages,
  most: number,
  handle: (arrived: JsMsg[]) => Promise<void>,
  capacity: number,
): Promise<void> {
  const queue: JsMsg[] = [];
  let inHand = 0;
  let closed = false;
  let stopped = false;
  let arrived: (() => void) | undefined;
  let taken: (() => void) | undefined;
  const reader = (async () => {
    try {
      for await (const message of messages) {
        queue.push(message);
        arrived?.();
        while (queue.length + inHand >= capacity && !stopped)
          await new Promise<void>((resolve) => (taken = resolve));
        if (stopped) break;
      }
    } finally {
      closed = true;
      arrived?.();
    }
  })();
  try {
    for (;;) {
      if (queue.length === 0) {
        if (closed) break;
        await new Promise<void>((resolve) => (arrived = resolve));
        arrived = undefined;
        // The library hands over what one read from the socket holds a message per microtask: the
        // end of this turn has them all, to be handled (and acked) together.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const batch = queue.splice(0, most);
      inHand = batch.length;
      await handle(batch);
      inHand = 0;
      taken?.();
      taken = undefined;
    }
  } finally {
    stopped = true;
    taken?.();
  }
  await reader;
}

/** A dead letter of another consumer published again: that consumer's to handle, not this one's. */
function replayedForAnother(consumer: EventConsumer, message: JsMsg): boolean {
  const target = message.headers?.get(REPLAY_FOR_HEADER);
  return Boolean(target) && target !== consumer.durable;
}

/** Whether the message is an envelope whose `type` looks like an event name this build lacks. */
function namesNewerEvent(message: JsMsg): boolean {
  try {
    const type = (JSON.parse(message.string()) as { type?: unknown } | null)?.type;
    return typeof type === 'string' && EVENT_NAME_SHAPE.test(type) && !isEventName(type);
  } catch {
    return false;
  }
}

/**
 * Text as a PostgreSQL text column takes it: a NUL (which it refuses, 22021) becomes U+FFFD, as
 * bytes that are no UTF-8 already did when the message was read. Else a message carrying one could
 * never be set aside and would come back every minute for ever.
 */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}
