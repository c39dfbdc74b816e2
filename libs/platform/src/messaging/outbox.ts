import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { EventEnvelope } from '@byrd/contracts';
import { OutboxMessage } from '../database/platform.entities.js';
import type { RowToInsert } from '../database/atomic-insert.js';
import type { BaseConfig } from '../config/config.js';
import { NATS_CONTEXT, PLATFORM_CONFIG } from './tokens.js';
import type { NatsContext } from './nats.js';
import { EventConsumers } from './consumers.js';

const BATCH_SIZE = 200;
const PUBLISHED_RETENTION = '1 day';
/** Pruning is housekeeping: once a minute is plenty, and keeps it off the publish path. */
const PRUNE_EVERY_MS = 60_000;

/**
 * Publishes outbox rows to JetStream. Rows are written by `append` in the caller's transaction, so a
 * crash between commit and publish only delays an event: the next relay pass sends it, and the
 * msgID de-duplicates a row published just before a crash but not yet marked.
 */
@Injectable()
export class Outbox implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Outbox.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  private wakeAgain = false;
  private lastPrune = 0;

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
      entity: { id: envelope.id, subject: envelope.type, payload: envelope, publishedAt: null },
    };
  }

  async append<E extends EventEnvelope>(manager: EntityManager, envelope: E): Promise<E> {
    await manager.insert(OutboxMessage, {
      id: envelope.id,
      subject: envelope.type,
      payload: envelope,
      publishedAt: null,
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

  /** Publishes soon instead of at the next poll. */
  wake(): void {
    if (!this.config.OUTBOX_RELAY_ENABLED || this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((error: unknown) => this.logger.error(`Outbox relay pass failed: ${String(error)}`))
        .finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const again = this.wakeAgain;
          this.wakeAgain = false;
          this.schedule(again ? 0 : this.config.OUTBOX_POLL_MS);
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
    if (total > 0 && Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      await this.prunePublished();
    }
    return total;
  }

  private async publishBatch(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      // SKIP LOCKED lets several replicas relay without sending the same row twice at once.
      // payload as text: it is published as stored, without a parse and re-stringify.
      const rows: { id: string; subject: string; payload: string }[] = await manager.query(
        `SELECT id, subject, payload::text AS payload FROM outbox WHERE published_at IS NULL
         ORDER BY seq LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED`,
      );
      if (rows.length === 0) return 0;
      // Pipelined: all publishes go out in order on one connection, then the acks are awaited together.
      const acks = rows.map((row) =>
        this.nats.js.publish(this.nats.subject(row.subject), row.payload, { msgID: row.id }),
      );
      const results = await Promise.allSettled(acks);
      const sent = rows.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.id);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) this.logger.warn(`Outbox publish failed, will retry: ${String(failed.reason)}`);
      if (sent.length > 0) {
        await manager.query(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])`, [sent]);
      }
      return failed ? 0 : sent.length;
    });
  }

  private async prunePublished(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE published_at < now() - interval '${PUBLISHED_RETENTION}' LIMIT 1000)`,
    );
  }
}
