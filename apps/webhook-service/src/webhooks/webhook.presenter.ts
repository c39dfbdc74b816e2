import type { WebhookAttempt, WebhookDelivery, WebhookRecord } from '@byrd/contracts';
import { presentCredential, type AnsweredSettingsRow } from '../settings/settings.presenter.js';
import type { WebhookAttemptRow, WebhookRow } from './webhook.entity.js';

export function presentWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    event: row.event,
    paymentMethod: row.paymentMethod,
    referenceIds: row.referenceIds,
    settingsId: row.settingsId,
    createdAt: row.createdAt.toISOString(),
    sentAt: row.sentAt?.toISOString() ?? null,
  };
}

export function presentAttempt(
  attempt: WebhookAttemptRow,
  webhook: WebhookRow,
  settings: AnsweredSettingsRow,
): WebhookAttempt {
  return {
    id: attempt.id,
    webhookId: webhook.id,
    event: webhook.event,
    paymentMethod: webhook.paymentMethod,
    content: JSON.parse(attempt.requestBody) as WebhookDelivery,
    createdAt: attempt.createdAt.toISOString(),
    // No answer (a timeout, a refused connection): no response at all, rather than a null status
    // the .NET client's non-nullable HttpStatusCode cannot read; `error` says what happened.
    response:
      attempt.statusCode === null ? null : { statusCode: attempt.statusCode, content: attempt.responseBody },
    settings: { url: attempt.url, credential: presentCredential(settings) },
    kind: attempt.kind,
    succeeded: attempt.succeeded,
    durationMs: attempt.durationMs,
    error: attempt.error,
  };
}
