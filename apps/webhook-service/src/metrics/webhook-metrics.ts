import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type AttemptKind = 'scheduled' | 'resend';

/**
 * Prometheus metrics of the webhook service, on a registry of its own (several apps may live in
 * one test process; the global registry would refuse their second registration).
 */
@Injectable()
export class WebhookMetrics {
  readonly registry = new Registry();

  /** Webhooks created by fan-out (one per matching setting). */
  readonly created = new Counter({
    name: 'webhook_created_total',
    help: 'Webhooks created by the fan-out of events to matching settings',
    registers: [this.registry],
  });

  /** Final outcome of scheduled deliveries: succeeded, or failed after the last retry. */
  readonly deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhooks that reached a final outcome (succeeded, or failed after the last retry)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Every HTTP attempt, by kind and result. */
  readonly attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Delivery attempts by kind (scheduled, resend) and result (success, failure)',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });

  /** Time of one HTTP attempt. */
  readonly attemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Duration of one delivery attempt (request sent until the answer was read)',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** From the event's occurrence to the receiver's 2xx. */
  readonly deliveryLatency = new Histogram({
    name: 'webhook_delivery_latency_seconds',
    help: 'Time from the event (occurredAt) to its successful delivery',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600, 86400],
    registers: [this.registry],
  });

  /** Deliveries this process is running right now. */
  readonly inFlight = new Gauge({
    name: 'webhook_deliveries_in_flight',
    help: 'Deliveries this process is running right now',
    registers: [this.registry],
  });

  constructor(dataSource: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'webhook_due_queue_depth',
      help: 'Webhooks due for an attempt now and not claimed by a worker',
      registers: [this.registry],
      async collect() {
        const [row] = await dataSource.query<{ due: number }[]>(
          `SELECT count(*)::int AS due FROM webhooks
           WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())`,
        );
        this.set(row.due);
      },
    });
    new Gauge({
      name: 'webhook_pending_total',
      help: 'Webhooks not yet delivered that will be retried (due now or later)',
      registers: [this.registry],
      async collect() {
        const [row] = await dataSource.query<{ pending: number }[]>(
          `SELECT count(*)::int AS pending FROM webhooks WHERE status = 'pending'`,
        );
        this.set(row.pending);
      },
    });
  }
}
