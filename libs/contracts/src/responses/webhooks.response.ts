import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { CREDENTIAL_TYPES, PAYMENT_METHODS, type CredentialType, type PaymentMethod } from '../enums.js';
import { ALL_EVENT_NAMES, SUBSCRIBABLE_EVENT_NAMES, type EventName } from '../events/catalogue.js';
import type {
  SubscribableEventName,
  WebhookAttempt,
  WebhookCredential,
  WebhookDelivery,
  WebhookRecord,
  WebhookSettings,
} from '../dto/webhooks.dto.js';
import { EXAMPLE_IDS, EXAMPLE_TIME } from './common.response.js';

@ApiSchema({
  name: 'WebhookCredential',
  description: 'Credential the webhook service sends with deliveries.',
})
export class WebhookCredentialSchema implements WebhookCredential {
  @ApiProperty({ enum: CREDENTIAL_TYPES, example: 'api-key' })
  type!: CredentialType;
  @ApiProperty({ type: String, nullable: true, example: '5b7e2f6c-1a2b-4c3d-9e8f-0a1b2c3d4e5f' })
  apiKey!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  username!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  password!: string | null;
  @ApiPropertyOptional({
    description:
      'Only when the service cannot read the credential and signing secret (sealed with a key it no longer holds): ' +
      'why, and what to do. apiKey and password are then null and the webhooks of the setting are not sent: ' +
      'they wait, none of their attempts used, until the key is back.',
    type: String,
  })
  unavailable?: string;
}

@ApiSchema({ name: 'WebhookSettings', description: 'A webhook configuration.' })
export class WebhookSettingsSchema implements WebhookSettings {
  @ApiProperty({ example: EXAMPLE_IDS.settings })
  id!: string;
  @ApiProperty({ example: 'https://shop.example.com/webhooks' })
  url!: string;
  @ApiProperty({
    description: 'Subscribed events; empty means all',
    enum: SUBSCRIBABLE_EVENT_NAMES,
    isArray: true,
    example: ['order.paid'],
  })
  events!: SubscribableEventName[];
  @ApiProperty({
    description: 'Subscribed payment methods; empty means all',
    enum: PAYMENT_METHODS,
    isArray: true,
    example: [],
  })
  paymentMethods!: PaymentMethod[];
  @ApiProperty({ type: () => WebhookCredentialSchema })
  credential!: WebhookCredential;
  @ApiProperty({ type: String, nullable: true, example: null })
  storeId!: string | null;
  @ApiProperty({ description: 'Whether a 4xx answer is retried', example: false })
  retryOn4xx!: boolean;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;
  @ApiPropertyOptional({
    description: 'Standard Webhooks signing secret of the deliveries; only in the creation answer',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  signingSecret?: string;
}

@ApiSchema({ name: 'WebhookSettingsAnswer', description: 'One webhook setting, wrapped as `{ data }`.' })
export class WebhookSettingsAnswer {
  @ApiProperty({ type: () => WebhookSettingsSchema })
  data!: WebhookSettings;
}

@ApiSchema({
  name: 'WebhookSettingsListAnswer',
  description: 'Webhook settings, most recent first, as `{ data }`.',
})
export class WebhookSettingsListAnswer {
  @ApiProperty({ type: () => [WebhookSettingsSchema] })
  data!: WebhookSettings[];
}

@ApiSchema({ name: 'DeletedWebhookSettings' })
export class DeletedWebhookSettingsSchema {
  @ApiProperty({ example: EXAMPLE_IDS.settings })
  id!: string;
  @ApiProperty({ enum: [true], example: true })
  deleted!: true;
}

@ApiSchema({ name: 'DeleteWebhookSettingsAnswer', description: '`DELETE /api/v1/settings/{id}` → 200.' })
export class DeleteWebhookSettingsAnswer {
  @ApiProperty({ type: () => DeletedWebhookSettingsSchema })
  data!: DeletedWebhookSettingsSchema;
}

@ApiSchema({ name: 'WebhookRecord', description: 'A webhook: one event for one settings entry.' })
export class WebhookRecordSchema implements WebhookRecord {
  @ApiProperty({ example: EXAMPLE_IDS.webhook })
  id!: string;
  @ApiProperty({ enum: ALL_EVENT_NAMES, example: 'order.paid' })
  event!: EventName;
  @ApiProperty({ enum: PAYMENT_METHODS, nullable: true, example: 'card' })
  paymentMethod!: PaymentMethod | null;
  @ApiProperty({
    description: 'orderId, transactionId, ...',
    type: [String],
    example: [EXAMPLE_IDS.order, EXAMPLE_IDS.transaction],
  })
  referenceIds!: string[];
  @ApiProperty({ example: EXAMPLE_IDS.settings })
  settingsId!: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;
  @ApiProperty({
    description: 'Time of the successful delivery',
    type: String,
    format: 'date-time',
    nullable: true,
    example: EXAMPLE_TIME,
  })
  sentAt!: string | null;
}

@ApiSchema({
  name: 'WebhookListAnswer',
  description:
    'Webhooks, most recent first, as `{ data }`; paging in the x-current-page, x-page-size, x-page-count and x-total-item-count headers.',
})
export class WebhookListAnswer {
  @ApiProperty({ type: () => [WebhookRecordSchema] })
  data!: WebhookRecord[];
}

@ApiSchema({ name: 'WebhookAttemptResponse', description: 'What the receiver answered.' })
export class WebhookAttemptResponseSchema {
  @ApiProperty({ example: 200 })
  statusCode!: number;
  @ApiProperty({ type: String, nullable: true, example: 'OK' })
  content!: string | null;
}

@ApiSchema({ name: 'WebhookAttemptSettings', description: 'Where and how an attempt was sent.' })
export class WebhookAttemptSettingsSchema {
  @ApiProperty({ example: 'https://shop.example.com/webhooks' })
  url!: string;
  @ApiProperty({ type: () => WebhookCredentialSchema })
  credential!: WebhookCredential;
}

@ApiSchema({ name: 'WebhookAttempt', description: 'One delivery attempt of a webhook.' })
export class WebhookAttemptSchema implements WebhookAttempt {
  @ApiProperty({ example: EXAMPLE_IDS.attempt })
  id!: string;
  @ApiProperty({ example: EXAMPLE_IDS.webhook })
  webhookId!: string;
  @ApiProperty({ enum: ALL_EVENT_NAMES, example: 'order.paid' })
  event!: EventName;
  @ApiProperty({ enum: PAYMENT_METHODS, nullable: true, example: 'card' })
  paymentMethod!: PaymentMethod | null;
  @ApiProperty({
    description:
      'Delivery body sent: { id, event, paymentMethod, settingsId, attemptId, createdAt, content }',
    type: 'object',
    additionalProperties: true,
  })
  content!: WebhookDelivery;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;
  @ApiProperty({
    description: 'Null when nothing came back (see `error`)',
    type: () => WebhookAttemptResponseSchema,
    nullable: true,
  })
  response!: WebhookAttemptResponseSchema | null;
  @ApiProperty({ type: () => WebhookAttemptSettingsSchema })
  settings!: WebhookAttemptSettingsSchema;
  @ApiProperty({ enum: ['scheduled', 'resend'], example: 'scheduled' })
  kind!: 'scheduled' | 'resend';
  @ApiProperty({ description: 'Whether the receiver answered 2xx', example: true })
  succeeded!: boolean;
  @ApiProperty({ example: 84 })
  durationMs!: number;
  @ApiProperty({
    description:
      "Why there was no answer, or why the answer's body stopped before its end (its status still counts); null when answered in full",
    type: String,
    nullable: true,
    example: null,
  })
  error!: string | null;
}

@ApiSchema({
  name: 'WebhookAttemptListAnswer',
  description: 'Attempts, most recent first, as `{ data }` (paging headers as the webhook list).',
})
export class WebhookAttemptListAnswer {
  @ApiProperty({ type: () => [WebhookAttemptSchema] })
  data!: WebhookAttempt[];
}

@ApiSchema({ name: 'ResendWebhooksResult' })
export class ResendWebhooksResultSchema {
  @ApiProperty({ type: [String], example: [EXAMPLE_IDS.webhook] })
  resent!: string[];
  @ApiProperty({ type: [String], example: [] })
  notFound!: string[];
}

@ApiSchema({ name: 'ResendWebhooksAnswer', description: '`POST /api/v1/webhooks/resend` → 202.' })
export class ResendWebhooksAnswer {
  @ApiProperty({ type: () => ResendWebhooksResultSchema })
  data!: ResendWebhooksResultSchema;
}
