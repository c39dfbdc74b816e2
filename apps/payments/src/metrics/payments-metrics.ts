import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { ServiceMetrics } from '@byrd/platform';

/**
 * What payments adds to the service's `GET /metrics`: every call to the acquirer and to the 3DS
 * server with its outcome and duration, and how authentications end. Fed by the measuring wrappers
 * around ACQUIRER and THREE_DS_PROVIDER, so whichever implementation is wired is measured.
 */
@Injectable()
export class PaymentsMetrics {
  readonly acquirerRequests = new Histogram({
    name: 'acquirer_request_duration_seconds',
    help: 'Calls to the acquirer by operation (Payment, PreAuth, Capture, Refund, Release, Lookup, Void) and outcome (Success, Denied, Error, TemporaryFailed, none for a lookup that found nothing, exception)',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.service.registry],
  });

  readonly threeDSRequests = new Histogram({
    name: 'three_ds_request_duration_seconds',
    help: 'Calls to the 3DS server by step (start, challenge) and result (frictionless, challenge, answered, exception)',
    labelNames: ['step', 'result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.service.registry],
  });

  readonly threeDSAuthentications = new Counter({
    name: 'three_ds_authentications_total',
    help: 'Finished 3DS authentications by flow (frictionless, challenge, abandoned) and outcome (the 3DS status: Authorized, Unauthorized, Expired, ...)',
    labelNames: ['flow', 'outcome'] as const,
    registers: [this.service.registry],
  });

  constructor(private readonly service: ServiceMetrics) {}
}
