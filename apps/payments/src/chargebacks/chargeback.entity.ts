import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ChargebackStatus, PaymentMethod } from '@byrd/contracts';
import { minorUnits } from '@byrd/platform';

/** A scheme's dispute of a settled payment or capture: money the merchant may lose. */
@Entity({ name: 'chargebacks' })
export class Chargeback {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @Column({ name: 'transaction_id', type: 'uuid' })
  transactionId: string;

  @Column({ name: 'order_id', type: 'uuid', nullable: true })
  orderId: string | null;

  @Column({ type: 'text' })
  status: ChargebackStatus;

  /** Won or Lost once decided; kept when the chargeback is then closed, so the disputed balance stays right. */
  @Column({ type: 'text', nullable: true })
  resolution: 'Won' | 'Lost' | null;

  @Column({ name: 'payment_method', type: 'text' })
  paymentMethod: PaymentMethod;

  @Column({ name: 'iso_amount', type: 'bigint', transformer: minorUnits })
  isoAmount: number;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  /** The `idempotency-key` of the request that opened it, if it sent one. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  /** The `idempotency-key` of the request that made its last move, if it sent one. */
  @Column({ name: 'move_idempotency_key', type: 'text', nullable: true })
  moveIdempotencyKey: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
