import { WebhookSettingsRow } from './settings/webhook-settings.entity.js';
import {
  WebhookAttemptRow,
  WebhookResendRequestRow,
  WebhookResendRow,
  WebhookRow,
} from './webhooks/webhook.entity.js';
import { Webhooks1764100000000 } from './migrations/1764100000000-webhooks.js';
import { RetryOn4xx1764600000000 } from './migrations/1764600000000-retry-on-4xx.js';
import { WebhookLeases1764200000000 } from './migrations/1764200000000-webhook-leases.js';
import { EndpointDueIndex1764700000000 } from './migrations/1764700000000-endpoint-due-index.js';
import { WebhookTraceparent1764800000000 } from './migrations/1764800000000-webhook-traceparent.js';
import { ResendEndpoint1764900000000 } from './migrations/1764900000000-resend-endpoint.js';
import { SettingsIdempotencyKey1765000000000 } from './migrations/1765000000000-settings-idempotency-key.js';
import { IdempotencyAnswersWithoutSecrets1765100000000 } from './migrations/1765100000000-idempotency-answers-without-secrets.js';
import { EndpointFailingSince1765500000000 } from './migrations/1765500000000-endpoint-failing-since.js';
import { ResendIdempotencyKey1765600000000 } from './migrations/1765600000000-resend-idempotency-key.js';
import { EndpointTriedAt1765700000000 } from './migrations/1765700000000-endpoint-tried-at.js';
import { OpenAttempts1766200000000 } from './migrations/1766200000000-open-attempts.js';

export const WEBHOOK_ENTITIES = [
  WebhookSettingsRow,
  WebhookRow,
  WebhookAttemptRow,
  WebhookResendRow,
  WebhookResendRequestRow,
];
export const WEBHOOK_MIGRATIONS = [
  Webhooks1764100000000,
  WebhookLeases1764200000000,
  RetryOn4xx1764600000000,
  EndpointDueIndex1764700000000,
  WebhookTraceparent1764800000000,
  ResendEndpoint1764900000000,
  SettingsIdempotencyKey1765000000000,
  IdempotencyAnswersWithoutSecrets1765100000000,
  EndpointFailingSince1765500000000,
  ResendIdempotencyKey1765600000000,
  EndpointTriedAt1765700000000,
  OpenAttempts1766200000000,
];
