import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { EventConsumers } from '../messaging/consumers.js';
import { Rpc } from '../rpc/rpc.js';

/** A route Fastify did not match: one label value, so probing paths cannot grow the series. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The Prometheus metrics every service exports at `GET /metrics`, on a registry of its own (several
 * apps may live in one test process): HTTP requests by route pattern, status and duration, the
 * database pool, the outbox backlog and its age, the durable consumers' work and lag, the RPC calls
 * this service made, and the Node process. A service adds its own (the webhook service's
 * deliveries) to `registry`.
 */
@Injectable()
export class ServiceMetrics {
  readonly registry = new Registry();

  private readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, and how long they took',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** The histogram of each method, route and status seen, so a request does not hash its labels. */
  private readonly httpSeries = new Map<string, { observe(seconds: number): void }>();

  constructor(
    @Optional() @Inject(DataSource) dataSource: DataSource | null,
    @Optional() @Inject(EventConsumers) consumers: EventConsumers | null,
    @Optional() @Inject(Rpc) rpc: Rpc | null,
  ) {
    // No service label: Prometheus names the scraped pod's job and instance itself.
    collectDefaultMetrics({ register: this.registry });
    if (dataSource) this.databaseMetrics(dataSource);
    if (consumers) this.consumerMetrics(consumers);
    if (rpc) this.rpcMetrics(rpc);
  }

  /** One answered request (Fastify's onResponse). */
  observeRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    const key = `${method} ${status} ${route ?? ''}`;
    let series = this.httpSeries.get(key);
    if (!series) {
      series = this.httpDuration.labels({ method, route: route ?? UNMATCHED_ROUTE, status });
      this.httpSeries.set(key, series);
    }
    series.observe(seconds);
  }

  private databaseMetrics(dataSource: DataSource): void {
    const pool = () => (dataSource.driver as PostgresDriver).master as Pool | undefined;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the PostgreSQL pool: open (total), idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const current = pool();
        if (!current) return;
        this.set({ state: 'total' }, current.totalCount);
        this.set({ state: 'idle' }, current.idleCount);
        this.set({ state: 'waiting' }, current.waitingCount);
      },
    });
    // The relay deletes what it published: what is left is the backlog, its oldest row the lag.
    const readBacklog = oncePerScrape(async () => {
      const [row] = await dataSource.query<{ rows: number; age: number }[]>(
        `SELECT count(*)::int AS rows,
           coalesce(extract(epoch FROM (now() - min(created_at))), 0)::float8 AS age FROM outbox`,
      );
      return row;
    });
    new Gauge({
      name: 'outbox_backlog_events',
      help: 'Events written to the outbox and not yet published to NATS',
      registers: [this.registry],
      async collect() {
        const backlog = await readBacklog();
        if (backlog) this.set(backlog.rows);
      },
    });
    new Gauge({
      name: 'outbox_oldest_event_age_seconds',
      help: 'Age of the oldest event not yet published (0 when none waits): the publish lag',
      registers: [this.registry],
      async collect() {
        const backlog = await readBacklog();
        if (backlog) this.set(backlog.age);
      },
    });
  }

  private rpcMetrics(rpc: Rpc): void {
    new Counter({
      name: 'rpc_client_calls_total',
      help: 'RPC calls this process made, by subject: answered (a result or a domain error) or unanswered (timed out, nobody serving)',
      labelNames: ['subject', 'result'] as const,
      registers: [this.registry],
      collect() {
        this.reset(); // the Rpc keeps the totals: each scrape shows them as they are
        for (const [subject, stats] of rpc.statsBySubject) {
          this.inc({ subject, result: 'answered' }, stats.answered);
          this.inc({ subject, result: 'unanswered' }, stats.unanswered);
        }
      },
    });
    new Counter({
      name: 'rpc_client_repeated_tries_total',
      help: 'Tries of repeatable RPC subjects sent again while no answer had come (a paused or slow replica), by subject',
      labelNames: ['subject'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [subject, stats] of rpc.statsBySubject) this.inc({ subject }, stats.repeats);
      },
    });
  }

  private consumerMetrics(consumers: EventConsumers): void {
    const readLag = oncePerScrape(() => consumers.lag());
    new Counter({
      name: 'events_consumed_total',
      help: 'Events this process took from its durable consumers: handled, duplicate (already handled), retried (a transient failure, redelivered later), dead_lettered',
      labelNames: ['result'] as const,
      registers: [this.registry],
      collect() {
        this.reset(); // the consumers keep the totals: each scrape shows them as they are
        const totals = consumers.counters;
        for (const [result, key] of [
          ['handled', 'handled'],
          ['duplicate', 'duplicates'],
          ['retried', 'retried'],
          ['dead_lettered', 'deadLettered'],
        ] as const) {
          this.inc({ result }, totals[key]);
        }
      },
    });
    new Gauge({
      name: 'events_consumer_pending',
      help: 'Per durable consumer: events in the stream not yet delivered (pending) and delivered but not yet acknowledged (ack_pending)',
      labelNames: ['consumer', 'state'] as const,
      registers: [this.registry],
      async collect() {
        for (const lag of (await readLag()) ?? []) {
          this.set({ consumer: lag.durable, state: 'pending' }, lag.pending);
          this.set({ consumer: lag.durable, state: 'ack_pending' }, lag.ackPending);
        }
      },
    });
    new Gauge({
      name: 'events_consumer_redelivered',
      help: 'Per durable consumer: messages delivered more than once and not yet acknowledged',
      labelNames: ['consumer'] as const,
      registers: [this.registry],
      async collect() {
        for (const lag of (await readLag()) ?? []) this.set({ consumer: lag.durable }, lag.redelivered);
      },
    });
  }
}

/**
 * One read shared by the gauges of a scrape; undefined when it failed (the database or the broker
 * away): those gauges keep their last values and the rest of the scrape still answers.
 */
function oncePerScrape<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let running: Promise<T | undefined> | null = null;
  return () =>
    (running ??= read()
      .catch(() => undefined)
      .finally(() => (running = null)));
}
