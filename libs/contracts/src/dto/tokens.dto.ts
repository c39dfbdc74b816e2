import { IsBoolean, IsDefined, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ReturnCode } from '../codes.js';
import {
  EmptyIsAbsent,
  IsCardExpiration,
  IsCardNumber,
  IsCvv,
  IsHttpUrl,
  IsOneOf,
  IsRequestTransactionMode,
  NestedObject,
  NoCardNumber,
  ToBoolean,
  Trim,
} from '../decorators.js';
import { TOKEN_TYPES, type CardBrand, type RequestTransactionMode, type TokenType } from '../enums.js';
import { PageQuery, type Action, type ListEnvelope } from './common.dto.js';

/** `Card` of a token request; 3DS data (`aav`, `dsTransactionId`, `eci`, `xid`) is optional. */
export class TokenCardDto {
  /** Full card number; spaces are removed. */
  @IsCardNumber()
  number: string;

  /** Expiry, MM/YY. */
  @IsCardExpiration()
  expiration: string;

  /** Security code; used for verification only, never stored. */
  @IsOptional()
  @IsCvv()
  cvv?: string;

  /** Cardholder name. */
  @IsOptional()
  @IsString()
  @Trim()
  @MaxLength(100)
  @NoCardNumber()
  holder?: string;

  /** 3DS authentication value (CAVV/AAV). */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  aav?: string;

  /** 3DS directory server transaction id. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  dsTransactionId?: string;

  /** Electronic commerce indicator. */
  @IsOptional()
  @IsString()
  @MaxLength(2)
  eci?: string;

  /** 3DS 1 transaction id. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  xid?: string;

  /** Credential-on-file mode, when sent inside the card. */
  @IsOptional()
  @IsRequestTransactionMode()
  transactionMode?: RequestTransactionMode;
}

/** `POST /api/v2/tokens` body; property names are PascalCase on the wire, as published. */
export class CreateTokenRequest {
  /** Token kind; only `Card` (also the default when omitted). */
  @IsOptional()
  @IsOneOf(TOKEN_TYPES)
  Type?: TokenType;

  /** Caller's aggregation reference (customer id, wallet id, ...). */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardNumber()
  CustomReference?: string;

  /** Alias of the token, usually chosen by the customer. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @NoCardNumber()
  Alias?: string;

  /** Where the shopper lands after 3DS verification. */
  @IsOptional()
  @IsHttpUrl()
  RedirectUrl?: string;

  /** Card details. */
  @IsDefined({ message: 'Card is required' })
  @NestedObject(() => TokenCardDto)
  Card: TokenCardDto;

  /** Credential-on-file mode (top level; `Card.transactionMode` is accepted too). */
  @IsOptional()
  @IsRequestTransactionMode()
  transactionMode?: RequestTransactionMode;
}

/** Card as stored, echoed by token creation. */
export interface TokenCardView {
  /** Masked: first six and last four digits, the rest `*`. */
  number: string;
  /** Expiry, MM/YY. */
  expiration: string;
  /** Always fully masked. */
  cvv: string | null;
  /** Cardholder name. */
  holder: string | null;
  /** 3DS data as sent. */
  aav: string | null;
  dsTransactionId: string | null;
  eci: string | null;
  xid: string | null;
  /** E.g. `ThreeDSecure`. */
  verificationMethod: string;
  /** E.g. `Undefined`. */
  scheme: string;
  /** E.g. `Undefined`. */
  usage: string;
  /** Three-letter country code of the issuer. */
  countryCode: string | null;
}

/** `POST /api/v2/tokens` → 201. */
export interface CreateTokenResponse {
  /** Card as stored (masked). */
  card: TokenCardView;
  /** Token GUID. */
  tokenId: string;
  /** As sent. */
  customReference: string | null;
  /** As sent. */
  alias: string | null;
  /** 3DS verification redirect, when needed. */
  action: Action | null;
  /** BYRD207 when 3DS verification is needed, else BYRD200. */
  code?: ReturnCode;
  /** Text of `code`. */
  description?: string;
}

/** `GET /api/v2/tokens/{tokenId}` → 200, and each item of the token list. */
export interface TokenResponse {
  /** Token GUID. */
  tokenId: string;
  /** Aggregation reference. */
  customReference: string | null;
  /** Alias given at creation. */
  alias: string | null;
  /** Card brand, e.g. MASTER. */
  brand: CardBrand;
  /** Expiry, MM/YY. */
  expiration: string;
  /** First six and last four digits. */
  maskedCardNumber: string;
  /** True once the card's expiry month has passed. */
  isExpired: boolean;
}

/** `GET /api/v2/tokens?customReference=&isExpired=` query. */
export class ListTokensQuery extends PageQuery {
  /**
   * Only tokens of this reference. Empty (`?customReference=`, as a client fills the published
   * template) is no filter: a token created with an empty reference has none.
   */
  @EmptyIsAbsent()
  @IsOptional()
  @IsString()
  @MaxLength(255)
  customReference?: string;

  /** Only expired (true) or only valid (false) tokens; "true"/"false" accepted, empty is no filter. */
  @EmptyIsAbsent()
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  isExpired?: boolean;
}

/** `GET /api/v2/tokens` → 200. */
export type TokenListResponse = ListEnvelope<TokenResponse>;
