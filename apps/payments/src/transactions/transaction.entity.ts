import {
  Column,
  CreateDateColumn,
  Entity,
  Not,
  PrimaryColumn,
  UpdateDateColumn,
  type FindOptionsWhere,
} from 'typeorm';
import { createdWithinKeyRetention, minorUnits } from '@byrd/platform';
import type {
  CardBrand,
  InitiatedFrom,
  MerchantMode,
  OperationType,
  PaymentMethod,
  ReturnCode,
  TransactionMode,
  TransactionStatus,
} from '@byrd/contracts';

/**
 * One money movement: a payment, pre-auth, capture, refund or release. Captures, refunds and
 * releases point at their source; the source keeps the running balances. No card number is stored:
 * only its masked form and brand.
 */
@Entity({ name: 'transactions' })
export class Transaction {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'merchant_mode', type: 'text' })
  merchantMode: MerchantMode;

  @Column({ name: 'order_id', type: 'uuid', nullable: true })
  orderId: string | null;

  @Column({ name: 'order_ref', type: 'text', nullable: true })
  orderRef: string | null;

  @Column({ name: 'operation_type', type: 'text' })
  /** `Verification`: a token's 3DS card verification, never shown to merchants nor announced. */
  operationType: OperationType | 'Verification';

  @Column({ name: 'source_transaction_id', type: 'uuid', nullable: true })
  sourceTransactionId: string | null;

  @Column({ name: 'payment_method', type: 'text' })
  paymentMethod: PaymentMethod;

  @Column({ type: 'text' })
  status: TransactionStatus;

  @Column({ type: 'text' })
  code: ReturnCode;

  @Column({ type: 'text' })
  description: string;

  @Column({ name: 'iso_amount', type: 'bigint', transformer: minorUnits })
  isoAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ name: 'captured_iso_amount', type: 'bigint', transformer: minorUnits })
  capturedIsoAmount: number;

  @Column({ name: 'refunded_iso_amount', type: 'bigint', transformer: minorUnits })
  refundedIsoAmount: number;

  @Column({ name: 'released_iso_amount', type: 'bigint', transformer: minorUnits })
  releasedIsoAmount: number;

  @Column({ type: 'text', nullable: true })
  brand: CardBrand | null;

  @Column({ name: 'masked_card_number', type: 'text', nullable: true })
  maskedCardNumber: string | null;

  @Column({ name: 'card_expiration', type: 'text', nullable: true })
  cardExpiration: string | null;

  @Column({ type: 'text', nullable: true })
  holder: string | null;

  @Column({ name: 'token_id', type: 'uuid', nullable: true })
  tokenId: string | null;

  @Column({ name: 'is_pre_auth', type: 'boolean' })
  isPreAuth: boolean;

  @Column({ name: 'transaction_mode', type: 'text' })
  transactionMode: TransactionMode;

  @Column({ name: 'initiated_from', type: 'text' })
  initiatedFrom: InitiatedFrom;

  @Column({ type: 'text' })
  acquirer: string;

  @Column({ name: 'redirect_url', type: 'text', nullable: true })
  redirectUrl: string | null;

  @Column({ name: 'request_id', type: 'uuid' })
  requestId: string;

  @Column({ type: 'uuid' })
  fingerprint: string;

  /**
   * The hosted form's "save my card": the order's `tokenOptions.customReference` the card is saved
   * under once the payment succeeds; null when the shopper did not ask.
   */
  @Column({ name: 'save_card_reference', type: 'text', nullable: true })
  saveCardReference: string | null;

  /** The vault token the card was saved as; null until then, and when the vault failed. */
  @Column({ name: 'saved_token_id', type: 'uuid', nullable: true })
  savedTokenId: string | null;

  /** Async methods: what the shopper needs to pay (multibanco entity/reference, mbway phone). */
  @Column({ name: 'async_details', type: 'jsonb', nullable: true })
  asyncDetails: Record<string, unknown> | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /**
   * Set (and committed) before the acquirer is asked, cleared once its answer is recorded: while set,
   * an authorisation or follow-up may be in flight or its outcome is unknown (TemporaryFailed), and
   * past the recovery delay RecoverAcquirerCalls settles it. Null otherwise.
   */
  @Column({ name: 'acquirer_pending_since', type: 'timestamptz', nullable: true })
  acquirerPendingSince: Date | null;

  /**
   * The `idempotency-key` of the request that created this payment, if it sent one: the merchant's
   * own, or a shopper's (`?checkoutKey=`) scoped by its checkout key (`checkoutScopedKey`).
   */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  /**
   * Its order refused it before its card reached the acquirer (another attempt held the order's
   * payment lock, or the order closed): recorded Denied, BYRD205, for the merchant like a decline,
   * but the hosted form must not tell its shopper the card was declined.
   */
  @Column({ name: 'refused_by_order', type: 'boolean', default: false })
  refusedByOrder: boolean;

  /**
   * Its money arrived after it had ended (an async payment we voided or failed, or one of an order
   * paid another way), and was refunded at once: Success, yet it holds no money, so a retry with its
   * idempotency-key is tried anew, not answered with it.
   */
  @Column({ name: 'refunded_at_once', type: 'boolean', default: false })
  refundedAtOnce: boolean;

  /** The `idempotency-key` of the `/pay` request that gave a two-step payment its card, if it sent one. */
  @Column({ name: 'pay_idempotency_key', type: 'text', nullable: true })
  payIdempotencyKey: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** The operation type of a transaction merchants see; a card verification is never one of them. */
export function publicOperationType(transaction: Pick<Transaction, 'id' | 'operationType'>): OperationType {
  if (transaction.operationType === 'Verification') {
    throw new Error(
      `Transaction ${transaction.id} is a card verification, which is never shown or announced`,
    );
  }
  return transaction.operationType;
}

/** A merchant's transactions as they may see and operate on them: never a card verification. */
export function ofMerchant(
  merchantId: string,
  where: FindOptionsWhere<Transaction> = {},
): FindOptionsWhere<Transaction> {
  return { ...where, merchantId, operationType: Not('Verification' as const) };
}

/**
 * The transactions a request with this idempotency-key created, within the key's retention: a retry
 * of that request finds what it started instead of starting it again.
 */
export function ofIdempotencyKey(
  merchantId: string,
  idempotencyKey: string,
  where: FindOptionsWhere<Transaction>,
): FindOptionsWhere<Transaction> {
  return {
    ...where,
    merchantId,
    idempotencyKey,
    createdAt: createdWithinKeyRetention(),
  };
}
