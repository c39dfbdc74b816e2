import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { minorUnits } from '@byrd/platform';
import type {
  MerchantMode,
  OperationType,
  OrderStatus,
  PaymentMethod,
  TransactionStatus,
} from '@byrd/contracts';

@Entity({ name: 'orders' })
export class Order {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'merchant_name', type: 'text' })
  merchantName: string;

  @Column({ name: 'merchant_mode', type: 'text' })
  merchantMode: MerchantMode;

  @Column({ name: 'checkout_key', type: 'uuid' })
  checkoutKey: string;

  @Column({ name: 'order_ref', type: 'text', nullable: true })
  orderRef: string | null;

  @Column({ name: 'iso_amount', type: 'bigint', transformer: minorUnits })
  isoAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ type: 'text' })
  status: OrderStatus;

  @Column({ type: 'jsonb', nullable: true })
  shopper: Record<string, unknown> | null;

  @Column({ name: 'order_options', type: 'jsonb', nullable: true })
  orderOptions: Record<string, unknown> | null;

  @Column({ name: 'payment_options', type: 'jsonb', nullable: true })
  paymentOptions: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  metadata: Record<string, unknown> | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** The transaction that paid the order (payment, or capture of a pre-authorisation). */
  @Column({ name: 'payment_id', type: 'uuid', nullable: true })
  paymentId: string | null;

  @Column({ name: 'last_transaction_id', type: 'uuid', nullable: true })
  lastTransactionId: string | null;

  @Column({ name: 'refunded_iso_amount', type: 'bigint', transformer: minorUnits })
  refundedIsoAmount: number;

  /**
   * The payment attempt (transaction id) that may be charging the order, or holds its money: no other
   * attempt may charge it and it cannot be canceled meanwhile. Null when no attempt does.
   */
  @Column({ name: 'payment_lock_id', type: 'uuid', nullable: true })
  paymentLockId: string | null;

  @Column({ name: 'payment_locked_at', type: 'timestamptz', nullable: true })
  paymentLockedAt: Date | null;

  /** The `idempotency-key` of the request that created it: a retry finds this order (CreateOrder). */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  /** With an idempotency-key, a hash of the whole request (CreateOrder compares a retry with it). */
  @Column({ name: 'request_hash', type: 'text', nullable: true })
  requestHash: string | null;

  @Column({ name: 'canceled_at', type: 'timestamptz', nullable: true })
  canceledAt: Date | null;

  @Column({ name: 'expired_at', type: 'timestamptz', nullable: true })
  expiredAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** What orders knows of a transaction on one of its orders, from the transaction.* events. */
@Entity({ name: 'order_transactions' })
export class OrderTransaction {
  @PrimaryColumn({ name: 'transaction_id', type: 'uuid' })
  transactionId: string;

  @Column({ name: 'order_id', type: 'uuid' })
  orderId: string;

  @Column({ name: 'operation_type', type: 'text' })
  operationType: OperationType;

  @Column({ type: 'text' })
  status: TransactionStatus;

  @Column({ name: 'iso_amount', type: 'bigint', transformer: minorUnits })
  isoAmount: number;

  @Column({ name: 'payment_method', type: 'text', nullable: true })
  paymentMethod: PaymentMethod | null;

  @Column({ name: 'source_transaction_id', type: 'uuid', nullable: true })
  sourceTransactionId: string | null;

  /** A late payment to an order held by another, or its refund: payments gave it back at once. */
  @Column({ name: 'refunded_at_once', type: 'boolean', default: false })
  refundedAtOnce: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
