import {
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import type { ReturnCode } from '../codes.js';
import {
  FromAlias,
  IsCurrencyCode,
  IsDecimalAmount,
  IsExpiresIn,
  IsHttpUrl,
  IsIsoAmount,
  IsOneOf,
  NestedObject,
  NoCardNumber,
  ToBoolean,
  ToInteger,
  ToPaymentMethods,
  Trim,
} from '../decorators.js';
import {
  PAYMENT_METHODS,
  type OperationType,
  type OrderStatus,
  type PaymentMethod,
  type TransactionStatus,
} from '../enums.js';

/** Shopper of an order; every field optional. */
export interface Shopper {
  firstName?: string;
  lastName?: string;
  email?: string;
  phoneNumber?: string;
}

/** A phone to notify (`orderOptions.notifyBy.sms` / `.whatsApp`). */
export interface NotifyPhone {
  firstName?: string;
  lastName?: string;
  phoneCountryCode: number;
  phoneNumber: string;
}

/**
 * `orderOptions.notifyBy`: where the merchant asked the payment link to be sent. Stored and
 * returned as given (Paybyrd's AI toolkit sends it); the platform sends no e-mail, SMS or WhatsApp
 * itself: the merchant's own messaging reads it from the order or its `order.created` webhook.
 */
export interface NotifyBy {
  email?: { address: string };
  sms?: NotifyPhone;
  whatsApp?: NotifyPhone;
}

/** `orderOptions` of an order. */
export interface OrderOptions {
  /** Where the shopper is sent after paying (success or failure). */
  redirectUrl?: string;
  /** Culture of the shopper, e.g. `pt-PT`. */
  culture?: string;
  /** The order's expiry, as the top-level `expiresIn` (which it must agree with when both are sent). */
  expiresIn?: string | number;
  /** Where to send the payment link. */
  notifyBy?: NotifyBy;
}

/** `paymentOptions.cardOptions`. */
export interface CardOptions {
  /** Pre-authorise only (capture later). */
  isPreAuth?: boolean;
}

/** `paymentOptions.tokenOptions`: offers the shopper to store the card. */
export interface TokenOptions {
  /** Reference the stored token gets; unique per shopper. */
  customReference: string;
  /** Store the card without asking the shopper. */
  tokenizationIsRequired?: boolean;
}

/** `paymentOptions` of an order. */
export interface PaymentOptions {
  cardOptions?: CardOptions;
  tokenOptions?: TokenOptions;
  /** Methods the hosted form offers; all when omitted. */
  allowedPaymentMethods?: PaymentMethod[];
}

export class ShopperDto implements Shopper {
  /** First name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  firstName?: string;

  /** Last name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  lastName?: string;

  /** E-mail address. */
  @IsOptional()
  @Trim()
  @IsEmail()
  @MaxLength(254)
  email?: string;

  /** Phone number, free form. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(32)
  phoneNumber?: string;
}

export class NotifyEmailDto {
  /** E-mail address. */
  @Trim()
  @IsEmail()
  @MaxLength(254)
  address: string;
}

export class NotifyPhoneDto implements NotifyPhone {
  /** First name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  firstName?: string;

  /** Last name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  lastName?: string;

  /** Country calling code, e.g. 351. */
  @ToInteger()
  @IsInt()
  @Min(1)
  @Max(999)
  phoneCountryCode: number;

  /** National number, digits only. */
  @IsString()
  @Matches(/^\d{4,15}$/, { message: 'phoneNumber must be 4 to 15 digits' })
  phoneNumber: string;
}

export class NotifyByDto implements NotifyBy {
  /** Send the link by e-mail. */
  @IsOptional()
  @NestedObject(() => NotifyEmailDto)
  email?: NotifyEmailDto;

  /** Send the link by SMS. */
  @IsOptional()
  @NestedObject(() => NotifyPhoneDto)
  sms?: NotifyPhoneDto;

  /** Send the link by WhatsApp (`whatsapp` accepted, as the AI toolkit spells it). */
  @FromAlias('whatsapp', NotifyPhoneDto)
  @IsOptional()
  @NestedObject(() => NotifyPhoneDto)
  whatsApp?: NotifyPhoneDto;
}

export class OrderOptionsDto implements OrderOptions {
  /** Where the shopper returns after paying. */
  @IsOptional()
  @IsHttpUrl()
  redirectUrl?: string;

  /** Culture such as `en-US`, `pt_PT` or `pt`. */
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,4})?$/, { message: 'culture must look like en-US' })
  culture?: string;

  /** "hh:mm:ss" or minutes, as the top-level `expiresIn` (Paybyrd's AI toolkit sends it here). */
  @IsOptional()
  @IsExpiresIn()
  expiresIn?: string | number;

  /** Where to send the payment link: stored and returned. */
  @IsOptional()
  @NestedObject(() => NotifyByDto)
  notifyBy?: NotifyByDto;
}

export class CardOptionsDto implements CardOptions {
  /** Pre-authorise only; "true"/"false" accepted. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  isPreAuth?: boolean;
}

export class TokenOptionsDto implements TokenOptions {
  /** Reference of the token to create (stored by the vault in clear, as `CustomReference` is). */
  @IsString()
  @MaxLength(255)
  @NoCardNumber()
  customReference: string;

  /** Store the card without asking; "true"/"false" accepted. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  tokenizationIsRequired?: boolean;
}

export class PaymentOptionsDto implements PaymentOptions {
  /** Card options. */
  @IsOptional()
  @NestedObject(() => CardOptionsDto)
  cardOptions?: CardOptionsDto;

  /** Tokenization offer. */
  @IsOptional()
  @NestedObject(() => TokenOptionsDto)
  tokenOptions?: TokenOptionsDto;

  /** Methods the hosted form offers; any case (`CARD`), `SIBS_MULTIBANCO` read as multibanco. */
  @IsOptional()
  @ToPaymentMethods()
  @IsArray()
  @ArrayUnique()
  @IsOneOf(PAYMENT_METHODS, { each: true })
  allowedPaymentMethods?: PaymentMethod[];
}

/**
 * `POST /api/v2/orders` body. `amount` or `isoAmount` is required; when both are sent the
 * service checks they agree (`reconcileAmounts`).
 */
export class CreateOrderRequest {
  /** Decimal amount, e.g. "10.00"; must fit the currency's decimals. */
  @ValidateIf((order: CreateOrderRequest) => order.amount != null || order.isoAmount == null)
  @IsDefined({ message: 'amount or isoAmount is required' })
  @IsDecimalAmount('currency')
  amount?: string;

  /** Amount in minor units, e.g. 1000; numeric strings accepted. */
  @IsOptional()
  @IsIsoAmount()
  isoAmount?: number;

  /** ISO 4217 code, uppercase. */
  @IsCurrencyCode()
  currency: string;

  /** Caller's reference. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardNumber()
  orderRef?: string;

  /** "hh:mm:ss" or minutes; default 15 minutes, at most 30 days. */
  @IsOptional()
  @IsExpiresIn()
  expiresIn?: string | number;

  /** Shopper details. */
  @IsOptional()
  @NestedObject(() => ShopperDto)
  shopper?: ShopperDto;

  /** Redirect and culture. */
  @IsOptional()
  @NestedObject(() => OrderOptionsDto)
  orderOptions?: OrderOptionsDto;

  /** Pre-auth, tokenization and allowed methods. */
  @IsOptional()
  @NestedObject(() => PaymentOptionsDto)
  paymentOptions?: PaymentOptionsDto;

  /**
   * Free caller data, echoed back. Like every input: at most 1,000 properties per object (or items
   * per array), 10,000 values in all, 64 levels deep, strings of at most 65,536 characters.
   */
  @IsOptional()
  @IsObject()
  @NoCardNumber()
  metadata?: Record<string, unknown>;
}

/** `POST /api/v2/orders` → 201. */
export interface OrderResponse {
  /** Order GUID. */
  orderId: string;
  /** Creation time, ISO 8601 UTC. */
  orderDate: string;
  /** Expiry time, ISO 8601 UTC. */
  expiresAt: string;
  /** Hosted form address, ready to open. */
  checkoutUrl: string;
  /** GUID the hosted form needs with the order id. */
  checkoutKey: string;
  /** Order status. */
  status: OrderStatus;
  /** Decimal amount with the currency's decimals. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  /** ISO 4217 code. */
  currency: string;
  /** Caller's reference. */
  orderRef: string | null;
  /** As sent. */
  shopper: Shopper | null;
  /** As sent. */
  orderOptions: OrderOptions | null;
  /** As sent. */
  paymentOptions: PaymentOptions | null;
  /** As sent. */
  metadata: Record<string, unknown> | null;
  /** BYRD200 on creation. */
  code: ReturnCode;
  /** Text of `code`. */
  description: string;
}

/** A transaction of an order, in `GET /api/v2/orders/{orderId}`. */
export interface OrderTransaction {
  /** Transaction GUID (API-FACTS: `transactions` items carry `id`). */
  id: string;
  /** The same GUID, under the name every other body gives it. */
  transactionId: string;
  /** Transaction status. */
  status: TransactionStatus;
  /** Operation kind. */
  operationType: OperationType;
  /** Decimal amount. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  /** Payment method, when the event that recorded it named one. */
  paymentMethod: PaymentMethod | null;
  /** Creation time, ISO 8601 UTC. */
  createdAt: string;
}

/** `GET /api/v2/orders/{orderId}` → 200. */
export interface OrderDetailsResponse extends OrderResponse {
  /** The payment that moved the order to its status, null before any. */
  paymentId: string | null;
  /** Transactions of the order, oldest first. */
  transactions: OrderTransaction[];
  /** Latest transaction, null before any payment. */
  lastTransactionId: string | null;
  /** Decimal amount refunded so far ("0.00" when none). */
  refundedAmount: string;
  /** Minor units refunded so far. */
  isoRefundedAmount: number;
  /** When the order was canceled, ISO 8601 UTC. */
  canceledAt: string | null;
}
