import { IsDefined, ValidateIf } from 'class-validator';
import type { ReturnCode } from '../codes.js';
import { FromAnySpelling, IsDecimalAmount, IsIsoAmount } from '../decorators.js';
import type { TransactionStatus } from '../enums.js';

/** Absent is allowed; `null` is not (it is refused, not read as "no amount"). */
const unlessAbsent = (_: object, value: unknown) => value !== undefined;

/**
 * Amount of a capture, refund or release: `isoAmount`, or the legacy decimal `amount`
 * (its decimals are checked by the service, which knows the currency). Decision: with
 * neither, the whole remaining amount of the source transaction is used. Because a dropped
 * field would move the whole amount, each is also read when spelt otherwise (`IsoAmount`, as
 * .NET clients serialise it, or `iso_amount`), and an explicit `null` is refused.
 */
export class OperationAmountRequest {
  /** Minor units; numeric strings accepted. */
  @FromAnySpelling()
  @ValidateIf(unlessAbsent)
  @IsIsoAmount()
  isoAmount?: number;

  /** Legacy decimal amount, e.g. "1.00". */
  @FromAnySpelling()
  @ValidateIf(unlessAbsent)
  @IsDefined() // IsDecimalAmount leaves null to the presence rule
  @IsDecimalAmount()
  amount?: string;
}

/** `POST /api/v2/capture/{transactionId}` body; partial captures allowed. */
export class CaptureRequest extends OperationAmountRequest {}

/** `POST /api/v2/refund/{transactionId}` body. */
export class RefundRequest extends OperationAmountRequest {}

/** `POST /api/v2/release/{transactionId}` body: voids (part of) an uncaptured pre-auth. */
export class ReleaseRequest extends OperationAmountRequest {}

/** Fields every operation response has. */
export interface OperationResponseBase {
  /** Return code (BYRD200 on success). */
  code: ReturnCode;
  /** Text of `code`. */
  description: string;
  /** Status of the new transaction. */
  status: TransactionStatus;
  /** GUID of the new transaction. */
  transactionId: string;
  /** Decimal amount of the operation. */
  amount: string;
  /** Minor units of the operation. */
  isoAmount: number;
  /** ISO 4217 code. */
  currency: string;
}

/** `sourceTransaction` of a capture response: the pre-auth. */
export interface CaptureSourceTransaction {
  transactionId: string;
  /** Pre-authorised amount. */
  amount: string;
  isoAmount: number;
  /** Captured so far, this capture included. */
  capturedAmount: string;
  isoCapturedAmount: number;
  /** Still capturable. */
  remainingAmount: string;
  isoRemainingAmount: number;
}

/** `POST /api/v2/capture/{transactionId}` → 200. */
export interface CaptureResponse extends OperationResponseBase {
  sourceTransaction: CaptureSourceTransaction;
}

/** `sourceTransaction` of a refund response: the payment or capture refunded. */
export interface RefundSourceTransaction {
  transactionId: string;
  /** Original amount. */
  amount: string;
  isoAmount: number;
  /** Refunded so far, this refund included. */
  refundedAmount: string;
  isoRefundedAmount: number;
  /** Still refundable. */
  remainingAmount: string;
  isoRemainingAmount: number;
}

/** `POST /api/v2/refund/{transactionId}` → 200. */
export interface RefundResponse extends OperationResponseBase {
  sourceTransaction: RefundSourceTransaction;
}

/** `sourceTransaction` of a release response: the pre-auth. */
export interface ReleaseSourceTransaction {
  transactionId: string;
  /** Pre-authorised amount. */
  amount: string;
  isoAmount: number;
  /** Released so far, this release included. */
  releasedAmount: string;
  isoReleasedAmount: number;
  /** Still held (capturable or releasable). */
  remainingAmount: string;
  isoRemainingAmount: number;
}

/** `POST /api/v2/release/{transactionId}` → 200. */
export interface ReleaseResponse extends OperationResponseBase {
  sourceTransaction: ReleaseSourceTransaction;
}
