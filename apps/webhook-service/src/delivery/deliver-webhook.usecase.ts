import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { CredentialType, type EventName, type WebhookDeliveryOf } from '@byrd/contracts';
import {
  contextFromTraceparent,
  inSpan,
  SpanKind,
  SpanStatusCode,
  startSpan,
  type Span,
} from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { WebhookHttpSender } from '../egress/http-sender.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { DeliveryRepository, type AttemptRecord, type DeliveryJob } from './delivery.repository.js';
import { MAX_ATTEMPTS, nextRetryDelayMs, receiverVerdict } from './retry-policy.js';

export const USER_AGENT = 'Byrd-Webhooks/1.0';

/** The headers of a delivery: JSON, the setting's credential, and the Standard Webhooks signature. */
export function deliveryHeaders(
  job: Pick<
    DeliveryJob,
    'webhookId' | 'signingSecret' | 'credentialType' | 'apiKey' | 'username' | 'password'
  >,
  body: string,
  at: Date,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': job.webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1_000)),
    'webhook-signature': new Webhook(job.signingSecret).sign(job.webhookId, at, body),
  };
  // Spelt as PHP receivers look them up: getallheaders() keeps the casing on the wire, and the
  // WooCommerce plugin reads $headers['X-Api-Key'] (a lowercase name answered 401 forever).
  if (job.credentialType === CredentialType.ApiKey && job.apiKey) headers['X-Api-Key'] = job.apiKey;
  if (job.credentialType === CredentialType.Basic && job.username !== null && job.password !== null)
    headers.Authorization = `Basic ${Buffer.from(`${job.username}:${job.password}`).toString('base64')}`;
  return headers;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
}

/** The body of a delivery (API-FACTS.md): what every attempt of a webhook POSTs, and `listen` streams. */
export function deliveryBody(
  webhook: Pick<
    DeliveryJob,
    'webhookId' | 'event' | 'paymentMethod' | 'settingsId' | 'createdAt' | 'content'
  > & {
    attemptId: string;
  },
): string {
  const delivery: WebhookDeliveryOf<EventName> = {
    id: webhook.webhookId,
    event: webhook.event,
    paymentMethod: webhook.paymentMethod,
    settingsId: webhook.settingsId,
    attemptId: webhook.attemptId,
    createdAt: webhook.createdAt.toISOString(),
    content: webhook.content,
  };
  return JSON.stringify(delivery);
}

/** What an attempt did, for the worker's endpoint scheduling. */
export interface DeliveryOutcome {
  /** The receiver answered 2xx. */
  succeeded: boolean;
  /**
   * What the attempt says about the receiver (receiverVerdict): true it took it, false it failed (no
   * answer, 5xx, 408, 429), null it answered a refusal, which the circuit breaker does not count.
   */
  verdict: boolean | null;
  /** When the webhook was scheduled again: in this many ms. */
  retryDelayMs: number | null;
  /**
   * Not sent: the setting's secrets open with no key of this process. Nothing was recorded and the
   * receiver was not judged; the delivery was let go of, to wait for the key.
   */
  unsent?: boolean;
}

/**
 * One attempt of one claimed delivery: POST the API-FACTS body, record the attempt with the
 * webhook's next state, count it. Runs with no transaction open during the HTTP call.
 */
@Injectable()
export class DeliverWebhook {
  private readonly logger = new Logger(DeliverWebhook.name);

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly recorder: AttemptRecorder,
    private readonly sender: WebhookHttpSender,
    private readonly metrics: WebhookMetrics,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  /** One attempt, as a client span in the trace of the event it delivers. */
  execute(job: DeliveryJob): Promise<DeliveryOutcome> {
    const span = startSpan('webhook attempt', SpanKind.CLIENT, contextFromTraceparent(job.traceparent), {
      'http.request.method': 'POST',
      'server.address': hostOf(job.url),
      'byrd.webhook.id': job.webhookId,
      'byrd.webhook.event': job.event,
      'byrd.webhook.kind': job.kind,
      'byrd.webhook.attempt': job.kind === 'scheduled' ? job.attemptCount + 1 : 0,
    });
    return inSpan(span, () => this.attempt(job, span));
  }

  private async attempt(job: DeliveryJob, span: Span): Promise<DeliveryOutcome> {
    if (job.secretsError) return this.unsent(job, job.secretsError, span);
    // A scheduled attempt's id was written with its claim, before this request (write-ahead).
    const attemptId = job.attemptId ?? randomUUID();
    const body = deliveryBody({ ...job, attemptId });
    const startedAt = new Date();
    const result = await this.sender.post({
      url: job.url,
      headers: deliveryHeaders(job, body, startedAt),
      body,
    });
    const verdict = receiverVerdict(result.statusCode);
    const succeeded = verdict === true; // a 2xx
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    if (!succeeded)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: result.error ?? `answered ${result.statusCode}`,
      });
    const attempt: AttemptRecord = {
      id: attemptId,
      number: job.kind === 'scheduled' ? job.attemptCount + 1 : null,
      url: job.url,
      requestBody: body,
      statusCode: result.statusCode,
      responseBody: result.responseBody,
      error: result.error,
      durationMs: result.durationMs,
      succeeded,
      verdict,
      startedAt,
    };
    this.metrics.attempts.inc({ kind: job.kind, result: succeeded ? 'success' : 'failure' });
    this.metrics.attemptDuration.observe({ kind: job.kind }, result.durationMs / 1_000);

    if (job.kind === 'resend') {
      const delivered = await this.deliveries.recordResend(job, attempt);
      if (delivered) this.delivered(job);
      return { succeeded, verdict, retryDelayMs: null };
    }
    const number = attempt.number ?? 1;
    const retryDelayMs = succeeded
      ? null
      : nextRetryDelayMs(
          {
            number,
            statusCode: result.statusCode,
            retryAfter: result.retryAfter,
            retryOn4xx: job.retryOn4xx,
          },
          this.config.WEBHOOK_RETRY_UNIT_MS,
        );
    const status = succeeded ? 'succeeded' : retryDelayMs === null ? 'failed' : 'pending';
    const moved = await this.recorder.record(job, attempt, { status, retryDelayMs });
    if (!moved) {
      const why = succeeded ? 'already delivered' : 'lease lost';
      this.logger.warn(`Webhook ${job.webhookId}: ${why} before attempt ${number} was recorded`);
      return { succeeded, verdict, retryDelayMs: null };
    }
    if (status === 'succeeded') this.delivered(job);
    if (status === 'failed') {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      this.logger.warn(`Webhook ${job.webhookId} failed after ${number} of ${MAX_ATTEMPTS} attempts`);
    }
    return { succeeded, verdict, retryDelayMs };
  }

  /**
   * A delivery that cannot be signed or authenticated: its setting's secrets open with no key of
   * this process (one removed from WEBHOOK_SECRETS_KEYS before re-sealing). Our fault, not the
   * receiver's: it is not an attempt (none recorded, none of its 51 spent, the circuit not judged,
   * not a failure for the held-webhooks sweep); it is let go of at once, so a replica that holds the
   * key can send it, and waits for the key here. Loud until then (docs/operations.md).
   */
  private async unsent(job: DeliveryJob, reason: string, span: Span): Promise<DeliveryOutcome> {
    this.metrics.unsent.inc({ reason: 'secrets' });
    this.logger.error(
      `Webhook ${job.webhookId} of setting ${job.settingsId} not sent: ${reason}; it waits, its attempts ` +
        'untouched, until its key is listed in WEBHOOK_SECRETS_KEYS again (docs/operations.md, ' +
        '"Webhook secrets\' keys")',
    );
    span.setStatus({ code: SpanStatusCode.ERROR, message: `not sent: ${reason}` });
    await this.deliveries.releaseUnsent(job);
    return { succeeded: false, verdict: null, retryDelayMs: null, unsent: true };
  }

  private delivered(job: DeliveryJob): void {
    this.metrics.deliveries.inc({ outcome: 'succeeded' });
    this.metrics.deliveryLatency.observe((Date.now() - job.occurredAt.getTime()) / 1_000);
  }
}
