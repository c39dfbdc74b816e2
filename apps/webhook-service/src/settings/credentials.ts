import { randomBytes, randomUUID } from 'node:crypto';
import { CredentialType, type CreateWebhookSettingsRequest } from '@byrd/contracts';

export interface DeliveryCredential {
  apiKey: string | null;
  username: string | null;
  password: string | null;
}

/** The credential sent with deliveries: the one given, or a generated one (API-FACTS.md). */
export function deliveryCredential(request: CreateWebhookSettingsRequest): DeliveryCredential {
  if (request.credentialType === CredentialType.ApiKey) {
    return { apiKey: request.apiKey ?? randomUUID(), username: null, password: null };
  }
  return {
    apiKey: null,
    username: request.username ?? `byrd-${randomBytes(6).toString('hex')}`,
    password: request.password ?? randomBytes(24).toString('base64url'),
  };
}

/** A Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
