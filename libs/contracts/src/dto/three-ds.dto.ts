// Bodies of the 3DS browser SDK protocol ({threeds_url}/api/v2/{id}/preAuth, /api/v1/{id}/auth,
// /api/v2/{id}/postAuth) and of the EMV messages the SDK form-posts.
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ReturnCode } from '../codes.js';
import { FromAlias, IsOneOf, NestedObject, ToBoolean, ToInteger } from '../decorators.js';
import type { ThreeDSecureStatus, TransactionStatus, TransStatus, VerificationMethod } from '../enums.js';

/** Browser data the issuer's risk analysis uses (EMV "browser information"). */
export class BrowserInfoDto {
  /** HTTP Accept header of the browser. */
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  acceptHeader?: string;

  /** `navigator.javaEnabled()`. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  javaEnabled?: boolean;

  /** JavaScript available (always true from the SDK). */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  javascriptEnabled?: boolean;

  /** `navigator.language`, e.g. pt-PT. */
  @IsOptional()
  @IsString()
  @MaxLength(35)
  language?: string;

  /** `screen.colorDepth` in bits. */
  @IsOptional()
  @ToInteger()
  @IsInt()
  colorDepth?: number;

  /** `screen.height` in pixels. */
  @IsOptional()
  @ToInteger()
  @IsInt()
  screenHeight?: number;

  /** `screen.width` in pixels. */
  @IsOptional()
  @ToInteger()
  @IsInt()
  screenWidth?: number;

  /**
   * `new Date().getTimezoneOffset()`, minutes. The public 3DS SDK sends it as `timezoneOffset`
   * (Browser.create()); stored as `timeZone` either way.
   */
  @IsOptional()
  @FromAlias('timezoneOffset')
  @ToInteger()
  @IsInt()
  timeZone?: number;

  /** User-Agent of the browser. */
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  userAgent?: string;
}

/** Cardholder data for 3DS risk analysis. */
export class ThreeDSCustomerDto {
  /** Full name. */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  name?: string;

  /** E-mail address. */
  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;

  /** Phone number. */
  @IsOptional()
  @IsString()
  @MaxLength(32)
  phone?: string;
}

/** Billing or shipping address for 3DS risk analysis. */
export class ThreeDSAddressDto {
  @IsOptional()
  @IsString()
  @MaxLength(50)
  line1?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  line2?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  line3?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  city?: string;

  @IsOptional()
  @IsString()
  @MaxLength(16)
  postalCode?: string;

  /** Country subdivision code. */
  @IsOptional()
  @IsString()
  @MaxLength(3)
  state?: string;

  /** ISO 3166-1 country code. */
  @IsOptional()
  @IsString()
  @MaxLength(3)
  country?: string;
}

/** `POST /api/v2/{id}/preAuth` body. */
export class ThreeDSPreAuthRequest {
  /** Cardholder. */
  @IsOptional()
  @NestedObject(() => ThreeDSCustomerDto)
  customer?: ThreeDSCustomerDto;

  /** Billing address. */
  @IsOptional()
  @NestedObject(() => ThreeDSAddressDto)
  billingAddress?: ThreeDSAddressDto;

  /** Shipping address. */
  @IsOptional()
  @NestedObject(() => ThreeDSAddressDto)
  shippingAddress?: ThreeDSAddressDto;

  /** Browser data. */
  @IsDefined({ message: 'browser is required' })
  @NestedObject(() => BrowserInfoDto)
  browser: BrowserInfoDto;
}

/** `POST /api/v2/{id}/preAuth` → 200. */
export interface ThreeDSPreAuthResponse {
  /** 3DS authentication GUID. */
  id: string;
  /** threeDSServerTransID of the EMV exchange. */
  processId: string;
  /** Where the SDK posts `threeDSMethodData` in a hidden iframe; empty when the issuer has none. */
  dsMethodUrl: string;
  /** threeDSMethodNotificationURL. */
  notificationUrl: string;
}

/** `POST /api/v1/{id}/auth` body (decision: optional 3DS Method completion indicator). */
export class ThreeDSAuthRequest {
  /** Y: 3DS Method completed, N: it did not, U: no 3DS Method URL. */
  @IsOptional()
  @IsOneOf(['Y', 'N', 'U'])
  threeDSCompInd?: 'Y' | 'N' | 'U';
}

/** `POST /api/v1/{id}/auth` → 200. */
export interface ThreeDSAuthResponse {
  /** 3DS authentication GUID. */
  id: string;
  /** threeDSServerTransID. */
  processId: string;
  /** acsTransID of the challenge. */
  challengeId: string;
  /** EMV message version, e.g. 2.2.0. */
  challengeVersion: string;
  /** Issuer challenge page; empty when frictionless. */
  challengeUrl: string;
}

/** `authenticationData` of the postAuth response. */
export interface ThreeDSAuthenticationData {
  /** `V2`. */
  threeDsVersion: 'V2';
  /** Authentication value (CAVV/AAV). */
  aav: string | null;
  /** DS transaction id. */
  dsTransactionId: string | null;
  /** Electronic commerce indicator (05/06/07 or 02/01/00 for Mastercard). */
  eci: string | null;
  /** `ThreeDSecure`. */
  verificationMethod: VerificationMethod;
  /** EMV message version, e.g. 2.2.0. */
  protocolVersion: string;
}

/** `POST /api/v2/{id}/postAuth` → 200 (409 while the challenge is unanswered). */
export interface ThreeDSPostAuthResponse {
  /** Payment transaction GUID. */
  transactionId: string;
  /** Where the SDK sends the shopper next (the payment's redirectUrl). */
  callbackUrl: string;
  /** Authentication outcome. */
  status: Exclude<ThreeDSecureStatus, 'Created'>;
  /**
   * Y when the payment went on to the acquirer (authenticated, or not enrolled), N otherwise: the
   * public SDK's two values, consistent with `executePayment`. The EMV value (e.g. U for a card not
   * enrolled) is on GET /api/v2/transactions/{id}.
   */
  transStatus: 'Y' | 'N';
  /** EMV transStatusReason, when given (e.g. 13 for a card not enrolled). */
  transStatusReason: string | null;
  /** Authentication data. */
  authenticationData: ThreeDSAuthenticationData;
  /** Whether the payment was authorised after authentication. */
  executePayment: boolean;
  /** Outcome of that payment. */
  paymentStatus: Extract<TransactionStatus, 'Success' | 'Denied' | 'Error'>;
  /** Return code of the payment. */
  code: ReturnCode;
  /** Text of the outcome. */
  message: string;
}

/** JSON inside `threeDSMethodData` (base64), posted to `dsMethodUrl`. */
export interface ThreeDSMethodData {
  threeDSServerTransID: string;
  threeDSMethodNotificationURL: string;
}

/** EMV challenge window sizes: 250x400, 390x400, 500x600, 600x400, full screen. */
export type ChallengeWindowSize = '01' | '02' | '03' | '04' | '05';

/** JSON inside `creq` (base64), posted to `challengeUrl`. */
export interface ChallengeRequestMessage {
  threeDSServerTransID: string;
  acsTransID: string;
  messageVersion: string;
  messageType: 'CReq';
  challengeWindowSize: ChallengeWindowSize;
}

/** JSON inside `cres` (base64), posted back by the ACS when the challenge ends. */
export interface ChallengeResponseMessage {
  threeDSServerTransID: string;
  acsTransID: string;
  messageVersion: string;
  messageType: 'CRes';
  /** Y when authenticated, N otherwise. */
  transStatus: TransStatus;
  /** Y once the challenge is complete. */
  challengeCompletionInd: 'Y' | 'N';
}
