import type { WebhookCredential, WebhookSettings } from '@byrd/contracts';
import type { WebhookSettingsRow } from './webhook-settings.entity.js';

export function presentCredential(row: WebhookSettingsRow): WebhookCredential {
  return { type: row.credentialType, apiKey: row.apiKey, username: row.username, password: row.password };
}

/** A setting as the API answers it; the signing secret only when just created. */
export function presentSettings(row: WebhookSettingsRow, withSecret = false): WebhookSettings {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    paymentMethods: row.paymentMethods,
    credential: presentCredential(row),
    storeId: row.storeId,
    retryOn4xx: row.retryOn4xx,
    createdAt: row.createdAt.toISOString(),
    ...(withSecret ? { signingSecret: row.signingSecret } : {}),
  };
}
