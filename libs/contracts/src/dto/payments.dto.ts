import { IsBoolean, IsDefined, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import type { ReturnCode } from '../codes.js';
import {
  ExclusiveWith,
  ForbiddenWhen,
  IsCardExpiration,
  IsCardNumber,
  IsCurrencyCode,
  IsCvv,
  IsDecimalAmount,
  IsGuid,
  IsHttpUrl,
  IsIsoAmount,
  IsMbWayPhoneNumber,
  IsOneOf,
  IsRequestTransactionMode,
  NestedObject,
  NoCardNumber,
  OnlyWhen,
  ToBoolean,
  Trim,
} from '../decorators.js';
import {
  ASYNC_PAYMENT_TYPES,
  PAYMENT_TYPES,
  PaymentType,
  type CardBrand,
  type PaymentMethod,
  type RequestTransactionMode,
  type ThreeDSecureChannel,
  type ThreeDSecureStatus,
  type TransactionMode,
  type TransactionStatus,
  type VerificationMethod,
} from '../enums.js';
import type { Action } from './common.dto.js';

/** `card` of a payment request. */
export class PaymentCardDto {
  /** Full card number; spaces are removed. */
  @IsCardNumber()
  number: string;

  /** Expiry, MM/YY. */
  @IsCardExpiration()
  expiration: string;

  /** Security code; lives in memory for the authorisation only. */
  @IsCvv()
  cvv: string;

  /** Cardholder name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  @NoCardNumber()
  holder?: string;
}

/** `mbway` of a payment request. */
export class MbWayPaymentDto {
  /**
   * The shopper's MB WAY number, where the app asks them to accept: a Portuguese mobile
   * ("912345678", "+351 912 345 678") or an international E.164 number. Normalised to E.164.
   */
  @IsMbWayPhoneNumber()
  phoneNumber: string;
}

/**
 * `POST /api/v2/payment` body: a card payment (`card`) or a token payment (`tokenId`, with
 * `transactionMode`); exactly one of the two. `amount` or `isoAmount` is required. The async
 * types take no card: `multibanco` answers an entity and reference to pay, `mbway` needs the
 * shopper's phone in `mbway.phoneNumber`.
 */
export class CreatePaymentRequest {
  /** Payment kind: `card` (token payments too), `multibanco` or `mbway`. */
  @IsOneOf(PAYMENT_TYPES)
  type: PaymentType;

  /** Minor units, e.g. 1000; numeric strings accepted. */
  @IsOptional()
  @IsIsoAmount()
  isoAmount?: number;

  /** Decimal amount, e.g. "10.00"; alternative to `isoAmount`. */
  @ValidateIf((payment: CreatePaymentRequest) => payment.amount != null || payment.isoAmount == null)
  @IsDefined({ message: 'isoAmount or amount is required' })
  @IsDecimalAmount('currency')
  amount?: string;

  /** ISO 4217 code, uppercase. */
  @IsCurrencyCode()
  currency: string;

  /**
   * Caller's reference; left out, the order's (`orderId`). With `?checkoutKey=` it is always the
   * order's: another is refused (400).
   */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardNumber()
  orderRef?: string;

  /**
   * Where the shopper returns after 3DS. With `?checkoutKey=` it must be on the origin of the order's
   * redirectUrl or one of the merchant's checkout origins (400 otherwise); left out, the order's.
   */
  @IsOptional()
  @IsHttpUrl()
  redirectUrl?: string;

  /**
   * Card details, or `tokenId`; refused on async types. A card payment sent with neither is created
   * and waits for `POST /api/v2/payment/{transactionId}/pay` (two-step payment).
   */
  @IsOptional()
  @NestedObject(() => PaymentCardDto)
  @ForbiddenWhen('type', ASYNC_PAYMENT_TYPES)
  card?: PaymentCardDto;

  /** Stored card to charge instead of `card`. */
  @IsOptional()
  @IsGuid()
  @ExclusiveWith('card')
  @ForbiddenWhen('type', ASYNC_PAYMENT_TYPES)
  tokenId?: string;

  /** Credential-on-file mode (token payments, or a card payment that tokenizes). */
  @IsOptional()
  @IsRequestTransactionMode()
  @ForbiddenWhen('type', ASYNC_PAYMENT_TYPES)
  transactionMode?: RequestTransactionMode;

  /** MB WAY details; required for type `mbway`, refused on other types. */
  @ValidateIf((payment: CreatePaymentRequest) => payment.type === PaymentType.MbWay || payment.mbway != null)
  @IsDefined({ message: 'mbway.phoneNumber is required for type mbway' })
  @NestedObject(() => MbWayPaymentDto)
  @OnlyWhen('type', PaymentType.MbWay)
  mbway?: MbWayPaymentDto;

  /** Pre-authorise only; "true"/"false" accepted. With `?checkoutKey=` the order decides (a different value is a 400). */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  isPreAuth?: boolean;

  /** Order the payment belongs to. */
  @IsOptional()
  @IsGuid()
  orderId?: string;
}

/** `POST /api/v2/payment?checkoutKey=`: browser-side payment of one order instead of `x-api-key`. */
export class CreatePaymentQuery {
  /** Checkout key of the order in `orderId`. */
  @IsOptional()
  @IsGuid()
  checkoutKey?: string;
}

/**
 * `POST /api/v2/payment/{transactionId}/pay` body: completes a two-step card payment.
 * Decision: the public record shows no body; it takes the card (or token) the first step lacked.
 */
export class CompletePaymentRequest {
  /** Card details, unless `tokenId` is sent. */
  @IsOptional()
  @NestedObject(() => PaymentCardDto)
  card?: PaymentCardDto;

  /** Stored card instead of `card`. */
  @IsOptional()
  @IsGuid()
  @ExclusiveWith('card')
  tokenId?: string;
}

/** `threeDSecure` of a payment response. */
export interface ThreeDSecureInfo {
  /** 3DS authentication GUID, handed to the SDK. */
  id: string;
  /** `ThreeDSecure`. */
  verificationMethod: VerificationMethod;
  /** `Browser`. */
  channel: ThreeDSecureChannel;
  /** `Created` until the shopper authenticates. */
  status: ThreeDSecureStatus;
}

/** `multibanco` of a payment or transaction: what the shopper pays at an ATM or in home banking. */
export interface MultibancoReference {
  /** Entity, 5 digits. */
  entity: string;
  /** Reference, 9 digits; unique among the merchant's pending references. */
  reference: string;
  /** Decimal amount to pay. */
  amount: string;
  /** When the reference stops accepting payment, ISO 8601 UTC. */
  expiresAt: string;
}

/** `mbway` of a payment or transaction. */
export interface MbWayDetails {
  /** Phone the MB WAY request was sent to, E.164. */
  phoneNumber: string;
}

/** `POST /api/v2/payment` → 201 (also while 3DS is pending, with BYRD207; async types answer BYRD201). */
export interface PaymentResponse {
  /** Payment kind. */
  type: PaymentType;
  /** ISO 4217 code. */
  currency: string;
  /** Caller's reference. */
  orderRef: string | null;
  /** Processor; `SIMULATED` in the sandbox. */
  acquirer: string;
  /** Card brand. */
  brand: CardBrand | null;
  /** `card`. */
  paymentMethod: PaymentMethod;
  /** As sent. */
  redirectUrl: string | null;
  /** Payment fingerprint GUID. */
  fingerprint: string;
  /** 3DS redirect when code is BYRD207. */
  action: Action | null;
  /** Return code. */
  code: ReturnCode;
  /** Text of `code`. */
  description: string;
  /** Transaction status (`Created` while 3DS is pending). */
  status: TransactionStatus;
  /** Request GUID, handed to the SDK with `threeDSecure.id`. */
  requestId: string;
  /** When a pending payment lapses, ISO 8601 UTC. */
  expiresAt: string;
  /** Whether the card may be tokenized. */
  acceptTokenization: boolean;
  /** Credential-on-file mode; `None` for a plain card payment. */
  transactionMode: TransactionMode;
  /** Transaction GUID. */
  transactionId: string;
  /** Decimal amount. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  /** Pre-authorisation only. */
  isPreAuth: boolean;
  /** Order the payment belongs to. */
  orderId: string | null;
  /** 3DS authentication, when one was started. */
  threeDSecure: ThreeDSecureInfo | null;
  /** Multibanco payments: the entity and reference to pay. */
  multibanco?: MultibancoReference;
  /** MB WAY payments: where the request went. */
  mbway?: MbWayDetails;
}
