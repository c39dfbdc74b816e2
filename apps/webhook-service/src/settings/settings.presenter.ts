import type { WebhookCredential, WebhookSettings } from '@byrd/contracts';
import type { AnsweredSecrets } from '../secrets/settings-secrets.js';
import type { WebhookSettingsRow } from './webhook-settings.entity.js';

/** A row with its secrets opened (SettingsSecrets.openRowForAnswer). */
export type AnsweredSettingsRow = AnsweredSecrets<WebhookSettingsRow>;

export function presentCredential(row: AnsweredSettingsRow): WebhookCredential {
  const { credentialType: type, apiKey, username, password, unavailable } = row;
  return { type, apiKey, username, password, ...(unavailable ? { unavailable } : {}) };
}

/** A setting as the API answers it; the signing secret only when just created (and readable). */
export function presentSettings(row: AnsweredSettingsRow, withSecret = false): WebhookSettings {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    paymentMethods: row.paymentMethods,
    credential: presentCredential(row),
    storeId: row.storeId,
    retryOn4xx: row.retryOn4xx,
    createdAt: row.createdAt.toISOString(),
    ...(withSecret && !row.unavailable ? { signingSecret: row.signingSecret } : {}),
  };
}
