import type { AsyncPaymentType, MerchantMode } from '@byrd/contracts';

/** A Multibanco payment instruction: the shopper pays it at an ATM or in home banking. */
export interface MultibancoInstruction {
  /** 5 digits: the entity (payment provider) the reference belongs to. */
  entity: string;
  /** 9 digits. */
  reference: string;
}

export interface AsyncPaymentRequest {
  merchantId: string;
  transactionId: string;
  isoAmount: number;
  currency: string;
  expiresAt: Date;
}

/**
 * The processor of async methods (SIBS or a PSP in production). It issues what the shopper needs
 * and later reports the outcome; in the sandbox the outcome comes from the simulation endpoints.
 */
export interface AsyncPaymentProvider {
  readonly name: string;
  /** Whether it takes payments of merchants in this mode (the sandbox takes sandbox keys only). */
  supports(mode: MerchantMode): boolean;
  /** How long the shopper has to pay, when no order sets an earlier limit. */
  lifetimeMs(type: AsyncPaymentType): number;
  /** A fresh entity and reference; called again when the reference collides with a pending one. */
  multibancoReference(request: AsyncPaymentRequest): Promise<MultibancoInstruction>;
  /** Asks the shopper to accept the payment in their MB WAY app. */
  requestMbWay(request: AsyncPaymentRequest & { phoneNumber: string }): Promise<void>;
  /**
   * Stops a pending reference or MB WAY request from being paid (its order was paid another way).
   * Our record says Canceled only once this returned; a payment that still arrives is refunded by us.
   */
  cancel(payment: { id: string; merchantId: string; paymentMethod: string }): Promise<void>;
}

export const ASYNC_PAYMENT_PROVIDER = Symbol('ASYNC_PAYMENT_PROVIDER');
