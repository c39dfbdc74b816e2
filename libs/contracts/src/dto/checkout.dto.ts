// The hosted form's own API (hosted-form-bff, under {checkout_url}/api/v2): what the page in the
// shopper's browser calls. Every call carries the order's checkout key in the `x-checkout-key`
// header (never an API key, never in the URL, so it stays out of access logs and Referer headers).
import { IsBoolean, IsOptional } from 'class-validator';
import { IsOneOf, NestedObject, ToBoolean } from '../decorators.js';
import {
  PAYMENT_TYPES,
  type CardBrand,
  type MerchantMode,
  type OrderStatus,
  type PaymentMethod,
  type PaymentType,
  type ThreeDSecureStatus,
  type TransactionStatus,
} from '../enums.js';
import type { ReturnCode } from '../codes.js';
import {
  MbWayPaymentDto,
  PaymentCardDto,
  type MbWayDetails,
  type MultibancoReference,
} from './payments.dto.js';

/** Header that carries the checkout key on every hosted-form API call. */
export const CHECKOUT_KEY_HEADER = 'x-checkout-key';

/** `GET {checkout_url}/api/v2/orders/{orderId}`: what the page renders. */
export interface CheckoutOrderView {
  orderId: string;
  /** `created`/`pending` can be paid; `paid`, `canceled`, `expired`, ... show a closed page. */
  status: OrderStatus;
  /** Decimal amount with the currency's exponent. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  /** ISO 4217 code. */
  currency: string;
  orderRef: string | null;
  /** Display name of the merchant. */
  merchantName: string;
  /** `sandbox` orders show a test-mode banner. */
  merchantMode: MerchantMode;
  /** ISO 8601 UTC. */
  expiresAt: string;
  /**
   * The order's redirect address. A `configs.redirectUrl` replaces it only when its origin is one of
   * `allowedOrigins` (the link is unsigned: anyone can write one).
   */
  redirectUrl: string | null;
  /**
   * Origins the form may send the shopper to and post its messages to: the order's redirectUrl's and
   * the merchant's checkout origins (`PUT /api/v2/checkout-origins`).
   */
  allowedOrigins: string[];
  /**
   * Methods this form can take and payments accepts for the order (Multibanco and MB WAY: EUR
   * only), in display order; empty when none can pay it.
   */
  paymentMethods: PaymentMethod[];
  /** Whether the "save my card" checkbox is offered (`paymentOptions.tokenOptions.customReference`). */
  saveCardOffered: boolean;
  /** Card payments only pre-authorise. */
  isPreAuth: boolean;
  /** A payment attempt holds the order (its outcome may not be known yet): no other may start. */
  paymentLocked: boolean;
  /**
   * A successful pre-authorisation holds the order until the merchant captures or releases it
   * (`status` stays `pending`): nothing is left to pay, the form shows the payment authorised.
   */
  authorized: boolean;
  /** The 3DS browser SDK (ES module) the page imports for a challenge: `{threeds_url}/sdk.js`. */
  threeDSecureSdkUrl: string;
}

/** `POST {checkout_url}/api/v2/orders/{orderId}/payments` body. */
export class CheckoutPaymentRequest {
  /** `card`, `multibanco` or `mbway`; must be among the order's `paymentMethods`. */
  @IsOneOf(PAYMENT_TYPES)
  type: PaymentType;

  /** Card payments: the card. */
  @IsOptional()
  @NestedObject(() => PaymentCardDto)
  card?: PaymentCardDto;

  /** MB WAY payments: the shopper's phone. */
  @IsOptional()
  @NestedObject(() => MbWayPaymentDto)
  mbway?: MbWayPaymentDto;

  /** Card payments: store the card for future payments (only when `saveCardOffered`). */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  saveCard?: boolean;
}

/** A card saved by a hosted-form payment. */
export interface CheckoutSavedCard {
  tokenId: string;
  maskedCardNumber: string;
  brand: CardBrand | null;
}

/**
 * A payment as the page follows it: the answer of `POST .../payments` and of
 * `GET {checkout_url}/api/v2/orders/{orderId}/payments/{transactionId}`.
 */
export interface CheckoutPaymentView {
  transactionId: string;
  type: PaymentType;
  /** `Created` while 3DS or an async payment is pending, then `Success`, `Denied`, ... */
  status: TransactionStatus;
  /** Return code and its text (e.g. BYRD207 while the shopper must authenticate). */
  code: ReturnCode;
  description: string;
  amount: string;
  currency: string;
  brand: CardBrand | null;
  /** Card payments that need 3DS: hand `id` and `requestId` to the SDK. */
  threeDSecure: { id: string; status: ThreeDSecureStatus; requestId: string } | null;
  /**
   * True when the order refused this attempt before the card reached the bank (another payment of
   * the order was in progress, or the order was paid or closed meanwhile): `Denied`, BYRD205, as the
   * merchant sees it, but no decline; the page shows the order as it stands instead.
   */
  refusedByOrder: boolean;
  /** Multibanco: entity, reference, amount, expiry. */
  multibanco: MultibancoReference | null;
  /** MB WAY: where the request went. */
  mbway: MbWayDetails | null;
  /** The card saved with this payment, once it succeeded (null when not asked or not saved). */
  savedCard: CheckoutSavedCard | null;
}

/** `POST {checkout_url}/api/v2/orders/{orderId}/cancel` answer. */
export interface CheckoutCancelResult {
  orderId: string;
  status: OrderStatus;
}
