import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { ThreeDSecureStatus, TransStatus } from '@byrd/contracts';

/**
 * A 3D Secure authentication of one payment (`threeDSecure.id`). While the shopper is challenged,
 * `sealedCard` holds the card number encrypted (AES-256-GCM, CARD_SEAL_KEY) so the payment can be
 * authorised afterwards; it is wiped once the payment's outcome is recorded (until then the recovery
 * can still send a payment the acquirer never had: RecoverAcquirerCalls), or, when the shopper asked
 * to save the card, once the vault has stored it (CardSaver, SaveCardsLeftBehind).
 */
@Entity({ name: 'three_ds_sessions' })
export class ThreeDSSession {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'transaction_id', type: 'uuid' })
  transactionId: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ type: 'text' })
  status: ThreeDSecureStatus;

  @Column({ name: 'challenge_required', type: 'boolean' })
  challengeRequired: boolean;

  @Column({ name: 'acs_trans_id', type: 'uuid' })
  acsTransId: string;

  @Column({ name: 'ds_transaction_id', type: 'uuid' })
  dsTransactionId: string;

  @Column({ name: 'protocol_version', type: 'text' })
  protocolVersion: string;

  @Column({ name: 'trans_status', type: 'text', nullable: true })
  transStatus: TransStatus | null;

  @Column({ name: 'trans_status_reason', type: 'text', nullable: true })
  transStatusReason: string | null;

  @Column({ type: 'text', nullable: true })
  eci: string | null;

  @Column({ type: 'text', nullable: true })
  aav: string | null;

  @Column({ name: 'challenge_completed_at', type: 'timestamptz', nullable: true })
  challengeCompletedAt: Date | null;

  @Column({ name: 'sealed_card', type: 'bytea', nullable: true })
  sealedCard: Buffer | null;

  /**
   * The request checking the shopper's code with the issuer, and until when its claim holds (database
   * time): others wait for its outcome meanwhile, or check the code themselves once it has run out.
   */
  @Column({ name: 'check_claim_id', type: 'uuid', nullable: true })
  checkClaimId: string | null;

  @Column({ name: 'check_claimed_until', type: 'timestamptz', nullable: true })
  checkClaimedUntil: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  browser: Record<string, unknown> | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
