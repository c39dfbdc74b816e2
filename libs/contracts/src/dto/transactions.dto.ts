import { IsOptional, IsString, MaxLength } from 'class-validator';
import type { ReturnCode } from '../codes.js';
import { EmptyIsAbsent, IsGuid } from '../decorators.js';
import type {
  CardBrand,
  InitiatedFrom,
  OperationType,
  PaymentMethod,
  ThreeDSecureStatus,
  TransactionMode,
  TransactionStatus,
  TransStatus,
} from '../enums.js';
import { PageQuery, type ListEnvelope } from './common.dto.js';
import type { MbWayDetails, MultibancoReference } from './payments.dto.js';

/** 3DS result of a transaction. */
export interface TransactionThreeDSecure {
  /** 3DS authentication GUID. */
  id: string;
  /** Authentication status. */
  status: ThreeDSecureStatus;
  /** EMV transStatus, once known. */
  transStatus: TransStatus | null;
  /** EMV transStatusReason, when the issuer gave one. */
  transStatusReason: string | null;
  /** Electronic commerce indicator. */
  eci: string | null;
  /** Authentication value (CAVV/AAV) of an authenticated shopper. */
  aav: string | null;
  /** Directory server transaction id. */
  dsTransactionId: string | null;
  /** 3DS protocol version, e.g. 2.2.0. */
  protocolVersion: string | null;
  /** `ThreeDSecure`. */
  verificationMethod: string;
}

/** `GET /api/v2/transactions/{transactionId}` → 200, and each item of the transaction list. */
export interface TransactionResponse {
  /** Transaction GUID. */
  transactionId: string;
  /** Order GUID, when attached to one. */
  orderId: string | null;
  /** Caller's reference. */
  orderRef: string | null;
  /** Status. */
  status: TransactionStatus;
  /** Operation kind. */
  operationType: OperationType;
  /** Card brand. */
  brand: CardBrand | null;
  /** Payment method. */
  paymentMethod: PaymentMethod;
  /** Return code of the latest outcome. */
  code: ReturnCode;
  /** Text of `code`. */
  description: string;
  /** Decimal amount. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  /** ISO 4217 code. */
  currency: string;
  /** Processor; `SIMULATED` in the sandbox. */
  acquirer: string;
  /** Credential-on-file mode. */
  transactionMode: TransactionMode;
  /** Pre-authorisation. */
  isPreAuth: boolean;
  /** Where the transaction was started. */
  initiatedFrom: InitiatedFrom;
  /** Transaction a capture, refund or release applies to. */
  sourceTransactionId: string | null;
  /** First six and last four digits of the card. */
  maskedCardNumber: string | null;
  /** Token charged, for token payments. */
  tokenId: string | null;
  /** 3DS result, when 3DS ran. */
  threeDSecure: TransactionThreeDSecure | null;
  /** Multibanco payments: the entity and reference to pay. */
  multibanco?: MultibancoReference;
  /** MB WAY payments: where the request went. */
  mbway?: MbWayDetails;
  /** Creation time, ISO 8601 UTC. */
  createdAt: string;
  /** Last change, ISO 8601 UTC. */
  updatedAt: string;
}

/** `GET /api/v2/transactions?orderRef=&orderId=` query; an empty value (the template sent as is) is no filter. */
export class ListTransactionsQuery extends PageQuery {
  /** Only transactions with this reference. */
  @EmptyIsAbsent()
  @IsOptional()
  @IsString()
  @MaxLength(255)
  orderRef?: string;

  /** Only transactions of this order. */
  @EmptyIsAbsent()
  @IsOptional()
  @IsGuid()
  orderId?: string;
}

/** `GET /api/v2/transactions` → 200 (decision: the gateway's list envelope, as for tokens). */
export type TransactionListResponse = ListEnvelope<TransactionResponse>;
