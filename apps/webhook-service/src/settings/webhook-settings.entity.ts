import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { CredentialType, MerchantMode, PaymentMethod, SubscribableEventName } from '@byrd/contracts';

/** A merchant's subscription: where to deliver which events, with which credential and secret. */
@Entity({ name: 'webhook_settings' })
export class WebhookSettingsRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'merchant_mode', type: 'text' })
  merchantMode: MerchantMode;

  @Column({ type: 'text' })
  url: string;

  @Column({ name: 'credential_type', type: 'text' })
  credentialType: CredentialType;

  @Column({ name: 'api_key', type: 'text', nullable: true })
  apiKey: string | null;

  @Column({ type: 'text', nullable: true })
  username: string | null;

  @Column({ type: 'text', nullable: true })
  password: string | null;

  /** Standard Webhooks secret (`whsec_` + base64), signs every delivery of this setting. */
  @Column({ name: 'signing_secret', type: 'text' })
  signingSecret: string;

  /** Empty = every event. */
  @Column({ type: 'text', array: true })
  events: SubscribableEventName[];

  /** Empty = every payment method. */
  @Column({ name: 'payment_methods', type: 'text', array: true })
  paymentMethods: PaymentMethod[];

  /** False: a 4xx answer (but 408 and 429) ends the webhook as failed instead of retrying it. */
  @Column({ name: 'retry_on_4xx', type: 'boolean' })
  retryOn4xx: boolean;

  @Column({ name: 'store_id', type: 'text', nullable: true })
  storeId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  /** The `idempotency-key` of the request that created it: a retry finds this setting (CreateSettings). */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;
}
