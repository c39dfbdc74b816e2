// Sandbox-only endpoints (`/api/v2/sandbox/...`): they stand in for the shopper of an async
// payment and for the card schemes, so integrations can exercise webhooks without real money.
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { IsDecimalAmount, IsGuid, IsIsoAmount, Trim } from '../decorators.js';
import type { ChargebackStatus, PaymentMethod, ValueOf } from '../enums.js';

/**
 * What the simulated shopper does with a pending async payment
 * (`POST /api/v2/sandbox/payments/{transactionId}/{action}`).
 */
export const AsyncPaymentSimulation = {
  /** Pays the Multibanco reference, or accepts the request in the MB WAY app. */
  Pay: 'pay',
  /** Declines the request in the MB WAY app (a Multibanco reference cannot be refused). */
  Refuse: 'refuse',
  /** Lets the reference (or the MB WAY request) lapse unpaid. */
  Expire: 'expire',
} as const;
export type AsyncPaymentSimulation = ValueOf<typeof AsyncPaymentSimulation>;
export const ASYNC_PAYMENT_SIMULATIONS = Object.freeze(Object.values(AsyncPaymentSimulation));

/** `POST /api/v2/sandbox/chargebacks` body: a scheme opens a chargeback on a settled payment. */
export class OpenChargebackRequest {
  /** The successful payment or capture disputed. */
  @IsGuid()
  transactionId: string;

  /** Disputed minor units; default: all that is not refunded or already charged back. */
  @IsOptional()
  @IsIsoAmount()
  isoAmount?: number;

  /** Disputed decimal amount, alternative to `isoAmount` (its decimals are checked against the payment's currency). */
  @IsOptional()
  @IsDecimalAmount()
  amount?: string;

  /** Scheme reason, e.g. "10.4 Fraud - Card Absent Environment". */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(255)
  reason?: string;
}

/**
 * The moves of `POST /api/v2/sandbox/chargebacks/{chargebackId}/{action}`: each action is
 * named after the event it emits (`chargeback.<action>`).
 */
export const ChargebackAction = {
  Disputing: 'disputing',
  PendingAction: 'pendingaction',
  Won: 'won',
  Lost: 'lost',
  Closed: 'closed',
} as const;
export type ChargebackAction = ValueOf<typeof ChargebackAction>;
export const CHARGEBACK_ACTIONS = Object.freeze(Object.values(ChargebackAction));

/** A chargeback: `POST /api/v2/sandbox/chargebacks` → 201, its moves and reads → 200. */
export interface ChargebackResponse {
  /** Chargeback GUID (the `chargebackId` of `chargeback.*` events). */
  chargebackId: string;
  /** Disputed transaction. */
  transactionId: string;
  /** Order of that transaction, if any. */
  orderId: string | null;
  /** Current status. */
  status: ChargebackStatus;
  /** Disputed decimal amount. */
  amount: string;
  /** Disputed minor units. */
  isoAmount: number;
  /** ISO 4217 code of the payment. */
  currency: string;
  /** Scheme reason, when given. */
  reason: string | null;
  /** Payment method of the disputed payment. */
  paymentMethod: PaymentMethod;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** Last move, ISO 8601 UTC. */
  updatedAt: string;
}
