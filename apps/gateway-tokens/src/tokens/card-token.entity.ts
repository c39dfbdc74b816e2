import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CardBrand, RequestTransactionMode } from '@byrd/contracts';

/**
 * A card kept as a token. The card number exists only in `cardCiphertext` (under the token's own
 * data key, itself wrapped by the KEK `kekId`); the rest is what may be shown. The holder is sealed
 * there too, but also echoed by a create answer kept under an idempotency-key (until DeleteToken).
 */
@Entity({ name: 'card_tokens' })
export class CardToken {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'custom_reference', type: 'text', nullable: true })
  customReference: string | null;

  @Column({ type: 'text', nullable: true })
  alias: string | null;

  @Column({ type: 'text' })
  brand: CardBrand;

  /** First six and last four digits. */
  @Column({ name: 'masked_number', type: 'text' })
  maskedNumber: string;

  /** MM/YY. */
  @Column({ type: 'text' })
  expiration: string;

  /** The first instant the card is no longer valid (the month after its expiry month). */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ type: 'bytea', select: false })
  fingerprint: Buffer;

  @Column({ name: 'card_ciphertext', type: 'bytea', select: false })
  cardCiphertext: Buffer;

  @Column({ name: 'wrapped_key', type: 'bytea', select: false })
  wrappedKey: Buffer;

  @Column({ name: 'kek_id', type: 'text' })
  kekId: string;

  @Column({ name: 'transaction_mode', type: 'text', nullable: true })
  transactionMode: RequestTransactionMode | null;

  /** The payments card verification (3DS) of this card; null when the merchant sent 3DS data. */
  @Column({ name: 'verification_id', type: 'uuid', nullable: true })
  verificationId: string | null;

  /**
   * When a verification of this card succeeded, or when the token was made when it needed none
   * (migration 1766200000000). Null while its verification waits: a token still null after
   * UNVERIFIED_CARD_GRACE_MS is forgotten (ForgetUnverifiedCards) unless payments says it passed.
   */
  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true })
  verifiedAt: Date | null;

  /**
   * A re-tokenization of this card waiting on its own verification (migration 1766100000000): its
   * card (sealed under this token's data key), expiry, alias and mode replace the token's once that
   * verification succeeded (`PromoteVerifiedCard`); all null when none waits.
   */
  @Column({ name: 'staged_verification_id', type: 'uuid', nullable: true })
  stagedVerificationId: string | null;

  @Column({ name: 'staged_card_ciphertext', type: 'bytea', nullable: true, select: false })
  stagedCardCiphertext: Buffer | null;

  @Column({ name: 'staged_expiration', type: 'text', nullable: true })
  stagedExpiration: string | null;

  @Column({ name: 'staged_expires_at', type: 'timestamptz', nullable: true })
  stagedExpiresAt: Date | null;

  @Column({ name: 'staged_alias', type: 'text', nullable: true })
  stagedAlias: string | null;

  @Column({ name: 'staged_transaction_mode', type: 'text', nullable: true })
  stagedTransactionMode: RequestTransactionMode | null;

  /** When the staged card was staged: it is dropped UNVERIFIED_CARD_GRACE_MS later if still waiting. */
  @Column({ name: 'staged_at', type: 'timestamptz', nullable: true })
  stagedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
