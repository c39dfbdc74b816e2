import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import {
  DefaultCredentialType,
  EmptyIsAbsent,
  FromAlias,
  IsGuid,
  IsHttpUrl,
  IsOneOf,
  NumberAsString,
  OnlyWhen,
  ToPaymentMethods,
} from '../decorators.js';
import { CREDENTIAL_TYPES, CredentialType, PAYMENT_METHODS, type PaymentMethod } from '../enums.js';
import {
  SUBSCRIBABLE_EVENT_NAMES,
  type EventName,
  type TransactionEventKind,
  type TransactionEventOutcome,
} from '../events/catalogue.js';
import type { PublicEventContentOf } from '../events/content.js';
import type { DataEnvelope } from './common.dto.js';

/** An event a setting may list: one the platform sends, or one of the accepted-but-never-sent names. */
export type SubscribableEventName = EventName | `order.${TransactionEventKind}.${TransactionEventOutcome}`;

/** Most ids one resend request may carry. */
export const MAX_RESEND_IDS = 100;

/**
 * Printable ASCII, no space at either end: what every delivery can send as a header value. The HTTP
 * client refuses control characters (CR/LF included) and text beyond U+00FF, receivers refuse (or
 * misread) anything beyond ASCII, and spaces around a value are not part of it on arrival.
 */
const HEADER_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * `POST /api/v1/settings` body. Missing credentials are generated: an API key for
 * `api-key`, a username and password for `basic`. As the public .NET client sends them, `""` and
 * null mean absent, a missing credentialType is `basic` with a username/password and `api-key`
 * otherwise, and storeId may be a number.
 */
export class CreateWebhookSettingsRequest {
  /** Address that receives deliveries. */
  @IsHttpUrl()
  url: string;

  /** `api-key` or `basic`; absent: `basic` when a username/password is sent, else `api-key`. */
  @DefaultCredentialType()
  @IsOneOf(CREDENTIAL_TYPES)
  credentialType: CredentialType;

  /** Key sent as `x-api-key`; only with `api-key`. */
  @EmptyIsAbsent()
  @IsOptional()
  @IsString()
  @MinLength(8)
  @MaxLength(255)
  @Matches(HEADER_TEXT, {
    message: 'apiKey must be printable ASCII with no space at either end (it is sent as the X-Api-Key header)',
  })
  @OnlyWhen('credentialType', CredentialType.ApiKey)
  apiKey?: string;

  /** Basic-auth user; only with `basic`, and together with `password`. */
  @EmptyIsAbsent()
  @ValidateIf(
    (settings: CreateWebhookSettingsRequest) => settings.username != null || settings.password != null,
  )
  @IsDefined({ message: 'username and password must be sent together' })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  @Matches(/^[^:]*$/, { message: 'username must not contain a colon (it ends the user in Basic authentication)' })
  @OnlyWhen('credentialType', CredentialType.Basic)
  username?: string;

  /** Basic-auth password; only with `basic`, and together with `username`. */
  @EmptyIsAbsent()
  @ValidateIf(
    (settings: CreateWebhookSettingsRequest) => settings.username != null || settings.password != null,
  )
  @IsDefined({ message: 'username and password must be sent together' })
  @IsString()
  @MinLength(8)
  @MaxLength(255)
  @OnlyWhen('credentialType', CredentialType.Basic)
  password?: string;

  /** Events to deliver; empty or absent means all. */
  @EmptyIsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsOneOf(SUBSCRIBABLE_EVENT_NAMES, { each: true })
  events?: SubscribableEventName[];

  /** Payment methods to deliver (any case); empty or absent means all. */
  @EmptyIsAbsent()
  @IsOptional()
  @ToPaymentMethods()
  @IsArray()
  @ArrayUnique()
  @IsOneOf(PAYMENT_METHODS, { each: true })
  paymentMethods?: PaymentMethod[];

  /**
   * Retry a webhook the receiver answered with a 4xx (default true, like any failure). False: a 4xx
   * other than 408 and 429 means the receiver does not want this event, and the webhook ends failed.
   */
  @EmptyIsAbsent()
  @IsOptional()
  @IsBoolean()
  retryOn4xx?: boolean;

  /** Store of the merchant the settings apply to (a number is taken as its digits). */
  @NumberAsString()
  @IsOptional()
  @IsString()
  @MaxLength(64)
  storeId?: string;
}

/** Credential the webhook service sends with deliveries. */
export interface WebhookCredential {
  /** `api-key` or `basic`. */
  type: CredentialType;
  /** For `api-key`. */
  apiKey: string | null;
  /** For `basic`. */
  username: string | null;
  /** For `basic`. */
  password: string | null;
  /**
   * Present only when the service cannot read this setting's credential and signing secret (sealed
   * with a key it no longer holds): why, and what to do. `apiKey` and `password` are then null, and
   * its webhooks are not sent: they wait, none of their attempts used, until the key is back.
   */
  unavailable?: string;
}

/** A webhook configuration. */
export interface WebhookSettings {
  /** Settings GUID. */
  id: string;
  /** Receiving address. */
  url: string;
  /** Subscribed events; empty means all. */
  events: SubscribableEventName[];
  /** Subscribed payment methods; empty means all. */
  paymentMethods: PaymentMethod[];
  /** Delivery credential. */
  credential: WebhookCredential;
  /** Store, when given. */
  storeId: string | null;
  /** Whether a 4xx answer is retried (true) or ends the webhook (false). */
  retryOn4xx: boolean;
  /** Creation time, ISO 8601 UTC. */
  createdAt: string;
  /**
   * Standard Webhooks signing secret (`whsec_` + base64) of this setting's deliveries. Only in
   * the creation answer: store it then (a lost secret means a new setting).
   */
  signingSecret?: string;
}

/** `POST /api/v1/settings` and `GET /api/v1/settings/{id}` → `{ data }`. */
export type WebhookSettingsResponse = DataEnvelope<WebhookSettings>;
/** `GET /api/v1/settings` → `{ data: [...] }`. */
export type WebhookSettingsListResponse = DataEnvelope<WebhookSettings[]>;
/** `DELETE /api/v1/settings/{id}` → `{ data: { id, deleted } }` (decision). */
export type DeleteWebhookSettingsResponse = DataEnvelope<{ id: string; deleted: true }>;

/** `GET /api/v1/webhooks?referenceId=` query (paging through `x-page` headers). */
export class ListWebhooksQuery {
  /** An orderId, transactionId or chargebackId. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  referenceId?: string;
}

/** A webhook: one event for one settings entry. */
export interface WebhookRecord {
  /** Webhook GUID. */
  id: string;
  /** Event name. */
  event: EventName;
  /** Payment method involved. */
  paymentMethod: PaymentMethod | null;
  /** Ids it can be found by: orderId, transactionId, ... */
  referenceIds: string[];
  /** Settings it was delivered for. */
  settingsId: string;
  /** Creation time, ISO 8601 UTC. */
  createdAt: string;
  /** Time of the successful delivery, null until then. */
  sentAt: string | null;
}

/** `GET /api/v1/webhooks` → `{ data: [...] }`, most recent first. */
export type WebhookListResponse = DataEnvelope<WebhookRecord[]>;

/** One delivery attempt of a webhook. */
export interface WebhookAttempt {
  /** Attempt GUID. */
  id: string;
  /** Webhook GUID. */
  webhookId: string;
  /** Event name. */
  event: EventName;
  /** Payment method involved. */
  paymentMethod: PaymentMethod | null;
  /** Delivery body sent. */
  content: WebhookDelivery;
  /** Time of the attempt, ISO 8601 UTC. */
  createdAt: string;
  /** What the receiver answered; null when nothing came back (timeout, connection error: see `error`). */
  response: { statusCode: number; content: string | null } | null;
  /** Where and how it was sent. */
  settings: { url: string; credential: WebhookCredential };
  /** `scheduled` (the retry schedule) or `resend` (a manual resend, outside the schedule). */
  kind: 'scheduled' | 'resend';
  /** Whether the receiver answered 2xx. */
  succeeded: boolean;
  /** Time from sending to the end of the answer, in milliseconds. */
  durationMs: number;
  /**
   * Why there was no answer (timeout, connection error, refused address), or why the answer's body
   * stopped before its end (its status still counts); null when answered in full.
   */
  error: string | null;
}

/** `GET /api/v1/webhooks/{webhookId}/attempts` → `{ data: [...] }`, most recent first. */
export type WebhookAttemptListResponse = DataEnvelope<WebhookAttempt[]>;

/** `POST /api/v1/webhooks/resend` body; `Ids` and `Url` are accepted too. */
export class ResendWebhooksRequest {
  /** Webhook GUIDs to resend. */
  @FromAlias('Ids')
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_RESEND_IDS)
  @IsGuid({ each: true })
  ids: string[];

  /** Other address to resend to, instead of the settings' URL. */
  @FromAlias('Url')
  @IsOptional()
  @IsHttpUrl()
  url?: string;
}

/** `POST /api/v1/webhooks/resend` → 202. */
export type ResendWebhooksResponse = DataEnvelope<{ resent: string[]; notFound: string[] }>;

/** Body POSTed to the subscriber's URL. */
export interface WebhookDeliveryOf<E extends EventName> {
  /** Webhook GUID. */
  id: string;
  /** Event name. */
  event: E;
  /** Payment method involved. */
  paymentMethod: PaymentMethod | null;
  /** Settings delivered for. */
  settingsId: string;
  /** Attempt GUID. */
  attemptId: string;
  /** Creation time of the webhook, ISO 8601 UTC. */
  createdAt: string;
  /** Event content (documented fields only). */
  content: PublicEventContentOf<E>;
}

/** Delivery body for the events in `E`; a union for the default, narrowed by `event`. */
export type WebhookDelivery<E extends EventName = EventName> = E extends EventName
  ? WebhookDeliveryOf<E>
  : never;
