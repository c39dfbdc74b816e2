import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import type { QueryResult } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import type { EventEnvelope } from '@byrd/contracts';
import { OutboxMessage } from '../database/platform.entities.js';
import type { RowToInsert } from '../database/atomic-insert.js';
import { onOwnConnection } from '../database/prepared.js';
import type { BaseConfig } from '../config/config.js';
import { NATS_CONTEXT, PLATFORM_CONFIG } from './tokens.js';
import type { NatsContext } from './nats.js';
import { EventConsumers } from './consumers.js';
import { natsTraceHeaders, traceparentOf } from '../tracing/tracing.js';

const BATCH_SIZE = 200;

interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: string;
  traceparent: string | null;
}

/**
 * Publishes outbox rows to JetStream and deletes them once acknowledged (the stream keeps the event).
 * Rows are written by `append` in the caller's transaction, so a crash between commit and publish
 * only delays an event: the next relay pass sends it, and the msgID de-duplicates a row published
 * just before a crash but not yet deleted.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Outbox.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  private wakeAgain = false;
  /** When the next pass is due (ms since epoch), so a stream of wakes never postpones it. */
  private nextPassAt = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(PLATFORM_CONFIG) private readonly config: BaseConfig,
    private readonly consumers: EventConsumers,
  ) {}

  /**
   * Writes an event (built with `createEnvelope`) inside the caller's transaction. Call `wake()`
   * after commit for low latency.
   */
  /** The outbox row of an event, for `insertAtomically` with the rows it announces. */
  row(envelope: EventEnvelope): RowToInsert {
    return {
      target: OutboxMessage,
      entity: { id: envelope.id, subject: envelope.type, payload: envelope, traceparent: traceparentOf() },
    };
  }

  async append<E extends EventEnvelope>(manager: EntityManager, envelope: E): Promise<E> {
    await manager.insert(OutboxMessage, {
      id: envelope.id,
      subject: envelope.type,
      payload: envelope,
      traceparent: traceparentOf(),
    });
    return envelope;
  }

  onApplicationBootstrap(): void {
    if (!this.config.OUTBOX_RELAY_ENABLED) {
      this.logger.warn('Outbox relay disabled (OUTBOX_RELAY_ENABLED=false): events stay in the outbox');
      return;
    }
    this.schedule(0);
  }

  /** Runs after HTTP has closed: waits for the consumers, then publishes what is left. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.consumers.stop();
    if (this.config.OUTBOX_RELAY_ENABLED) {
      await this.pass().catch((error: unknown) =>
        this.logger.warn(`Final outbox pass failed: ${String(error)}`),
      );
    }
  }

  /** Publishes soon (after OUTBOX_BATCH_WINDOW_MS) instead of at the next poll. */
  wake(): void {
    if (!this.config.OUTBOX_RELAY_ENABLED || this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    const delayMs = this.config.OUTBOX_BATCH_WINDOW_MS;
    if (this.nextPassAt <= Date.now() + delayMs) return; // a pass is due within the window anyway
    this.schedule(delayMs);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.nextPassAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((error: unknown) => this.logger.error(`Outbox relay pass failed: ${String(error)}`))
        .finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const again = this.wakeAgain;
          this.wakeAgain = false;
          this.schedule(again ? this.config.OUTBOX_BATCH_WINDOW_MS : this.config.OUTBOX_POLL_MS);
        });
    }, delayMs);
  }

  /** Publishes pending rows until none are left. Returns the number published. */
  async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const published = await this.publishBatch();
      total += published;
      if (published < BATCH_SIZE) break;
    }
    return total;
  }

  private async publishBatch(): Promise<number> {
    // A pool client with plain SQL: the claim and the delete each take one round trip, and the
    // transaction commits without waiting for the WAL flush (synchronous_commit off). That is safe
    // here: a delete lost in a database crash re-publishes the row, and JetStream drops the
    // duplicate by its msgID.
    return onOwnConnection(this.dataSource, async (connection) => {
      const { client } = connection;
      try {
        // SKIP LOCKED lets several replicas relay without sending the same row twice at once.
        // payload as text: it is published as stored, without a parse and re-stringify.
        const claimed = (await client.query(
          `BEGIN; SET LOCAL synchronous_commit = off;
           SELECT seq, id, subject, payload::text AS payload, traceparent FROM outbox
           ORDER BY seq LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED`,
        )) as unknown as QueryResult<OutboxRow>[];
        const rows = claimed[2].rows;
        if (rows.length === 0) {
          await client.query('COMMIT');
          return 0;
        }
        // Pipelined: all publishes go out in order on one connection, then the acks are awaited together.
        const acks = rows.map((row) =>
          this.nats.js.publish(this.nats.subject(row.subject), row.payload, {
            msgID: row.id,
            headers: natsTraceHeaders(row.traceparent),
          }),
        );
        const results = await Promise.allSettled(acks);
        const sent = rows.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.seq);
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) this.logger.warn(`Outbox publish failed, will retry: ${String(failed.reason)}`);
        // seq values are bigints read from the table, so they can be inlined (one simple-protocol
        // round trip for the delete and the commit).
        await client.query(
          sent.length > 0 ? `DELETE FROM outbox WHERE seq IN (${sent.join(',')}); COMMIT` : 'COMMIT',
        );
        return failed ? 0 : sent.length;
      } catch (error) {
        if (!connection.lost) await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }
}
