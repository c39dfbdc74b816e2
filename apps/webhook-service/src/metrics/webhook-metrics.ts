import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter, Gauge, Histogram } from 'prom-client';
import { ServiceMetrics } from '@byrd/platform';
import { CLAIMABLE, PENDING_ENDPOINTS_CTE } from '../delivery/delivery.repository.js';

export type AttemptKind = 'scheduled' | 'resend';

/**
 * Prometheus metrics of the webhook service's deliveries, on the service's registry (the platform's
 * `GET /metrics`, beside the HTTP, database, outbox and consumer metrics every service exports).
 */
@Injectable()
export class WebhookMetrics {
  /** Webhooks created by fan-out (one per matching setting). */
  readonly created = new Counter({
    name: 'webhook_created_total',
    help: 'Webhooks created by the fan-out of events to matching settings',
    registers: [this.service.registry],
  });

  /** Final outcome of scheduled deliveries: succeeded, or failed after the last retry. */
  readonly deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhooks that reached a final outcome (succeeded, or failed after the last retry)',
    labelNames: ['outcome'] as const,
    registers: [this.service.registry],
  });

  /** Every HTTP attempt, by kind and result. */
  readonly attempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Delivery attempts by kind (scheduled, resend) and result (success, failure)',
    labelNames: ['kind', 'result'] as const,
    registers: [this.service.registry],
  });

  /**
   * Deliveries claimed and let go of without a request (not attempts: nothing recorded, they wait):
   * the setting's secrets open with no configured key.
   */
  readonly unsent = new Counter({
    name: 'webhook_attempts_unsent_total',
    help: "Deliveries not sent, left waiting, by reason (secrets: no key of WEBHOOK_SECRETS_KEYS opens the setting's credential or signing secret)",
    labelNames: ['reason'] as const,
    registers: [this.service.registry],
  });

  /** Time of one HTTP attempt. */
  readonly attemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Duration of one delivery attempt (request sent until the answer was read)',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.service.registry],
  });

  /** From the event's occurrence to the receiver's 2xx. */
  readonly deliveryLatency = new Histogram({
    name: 'webhook_delivery_latency_seconds',
    help: 'Time from the event (occurredAt) to its successful delivery',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600, 86400],
    registers: [this.service.registry],
  });

  /** Deliveries this process is running right now. */
  readonly inFlight = new Gauge({
    name: 'webhook_deliveries_in_flight',
    help: 'Deliveries this process is running right now',
    registers: [this.service.registry],
  });

  /** Endpoints this process holds back with an open (or half-open) circuit. */
  readonly openCircuits = new Gauge({
    name: 'webhook_endpoint_circuits_open',
    help: 'Endpoints whose deliveries this process holds back after failures in a row (circuit open or probing)',
    registers: [this.service.registry],
  });

  /** Circuit breaker transitions. */
  readonly circuitChanges = new Counter({
    name: 'webhook_endpoint_circuit_changes_total',
    help: 'Endpoint circuits opened (failures in a row, or a failed probe) and closed (a delivery succeeded)',
    labelNames: ['to'] as const,
    registers: [this.service.registry],
  });

  // A parameter property: assigned before the fields above are (useDefineForClassFields is off).
  constructor(
    dataSource: DataSource,
    private readonly service: ServiceMetrics,
  ) {
    new Gauge({
      name: 'webhook_due_queue_depth',
      help: 'Webhooks due for an attempt now and not claimed by a worker',
      registers: [this.service.registry],
      async collect() {
        // Endpoint by endpoint through webhooks_endpoint_due_idx: only due rows are read.
        const [row] = await dataSource.query<{ due: number }[]>(
          `WITH RECURSIVE ${PENDING_ENDPOINTS_CTE}
           SELECT coalesce(sum((SELECT count(*) FROM webhooks
             WHERE settings_id = e.settings_id AND ${CLAIMABLE} AND next_attempt_at <= now())), 0)::int AS due
           FROM endpoints e WHERE e.settings_id IS NOT NULL`,
        );
        this.set(row.due);
      },
    });
    new Gauge({
      name: 'webhook_pending_total',
      help: 'Webhooks not yet delivered that will be retried (due now or later)',
      registers: [this.service.registry],
      async collect() {
        const [row] = await dataSource.query<{ pending: number }[]>(
          `SELECT count(*)::int AS pending FROM webhooks WHERE status = 'pending'`,
        );
        this.set(row.pending);
      },
    });
  }
}
