import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventName, PaymentMethod } from '@byrd/contracts';

export type WebhookStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

/** One event for one settings entry, and where its delivery stands. */
@Entity({ name: 'webhooks' })
export class WebhookRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'settings_id', type: 'uuid' })
  settingsId: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ type: 'text' })
  event: EventName;

  @Column({ name: 'payment_method', type: 'text', nullable: true })
  paymentMethod: PaymentMethod | null;

  @Column({ name: 'reference_ids', type: 'text', array: true })
  referenceIds: string[];

  /** The public `content` of the event (documented fields only). */
  @Column({ type: 'jsonb' })
  content: Record<string, unknown>;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  /** W3C trace context of the event's handling; each delivery attempt is a span of that trace. */
  @Column({ type: 'text', nullable: true })
  traceparent: string | null;

  @Column({ type: 'text' })
  status: WebhookStatus;

  /** Scheduled attempts made so far (resends not counted). */
  @Column({ name: 'attempt_count', type: 'integer' })
  attemptCount: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'lease_token', type: 'uuid', nullable: true })
  leaseToken: string | null;

  /** End of the claim of the worker delivering it now (null when no worker holds it). */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  /** The scheduled attempt its last claim started and no outcome has closed yet (its `attemptId`). */
  @Column({ name: 'open_attempt_id', type: 'uuid', nullable: true })
  openAttemptId: string | null;

  /** When that attempt started. */
  @Column({ name: 'open_attempt_at', type: 'timestamptz', nullable: true })
  openAttemptAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

export type AttemptKind = 'scheduled' | 'resend';

/** One HTTP attempt to deliver a webhook, as sent and as answered. */
@Entity({ name: 'webhook_attempts' })
export class WebhookAttemptRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  @Column({ type: 'text' })
  kind: AttemptKind;

  /** 1-based number among the scheduled attempts; null for a resend. */
  @Column({ type: 'integer', nullable: true })
  number: number | null;

  @Column({ type: 'text' })
  url: string;

  /** The exact bytes POSTed (the signature covers them). */
  @Column({ name: 'request_body', type: 'text' })
  requestBody: string;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  /** The receiver's answer, at most 20 KB. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** Timeout, connection or refusal reason; null when the receiver answered. */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ type: 'boolean' })
  succeeded: boolean;

  /** Wait chosen before the next scheduled attempt; null when none follows. */
  @Column({ name: 'retry_delay_ms', type: 'integer', nullable: true })
  retryDelayMs: number | null;

  /** When the request started. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A manual resend waiting for its one extra attempt. */
@Entity({ name: 'webhook_resends' })
export class WebhookResendRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  /** The webhook's setting: the endpoint whose fair share the resend takes a slot of. */
  @Column({ name: 'settings_id', type: 'uuid' })
  settingsId: string;

  /** Another address to send to; null = the settings' URL. */
  @Column({ type: 'text', nullable: true })
  url: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt: Date;

  @Column({ name: 'lease_token', type: 'uuid', nullable: true })
  leaseToken: string | null;

  @Column({ name: 'requested_at', type: 'timestamptz' })
  requestedAt: Date;
}

/**
 * A resend request sent with an `idempotency-key`, as it was answered: a retry of it with the key
 * finds it (ResendWebhooks) and queues nothing more.
 */
@Entity({ name: 'webhook_resend_requests' })
export class WebhookResendRequestRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  /** The webhook ids asked, lowercase, each once, in the request's order. */
  @Column({ type: 'uuid', array: true })
  ids: string[];

  /** The other address asked; null = each setting's URL. */
  @Column({ type: 'text', nullable: true })
  url: string | null;

  /** Those of `ids` that were found and queued. */
  @Column({ type: 'uuid', array: true })
  resent: string[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
