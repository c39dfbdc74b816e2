import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import {
  CARD_BRANDS,
  CHARGEBACK_STATUSES,
  INITIATED_FROM_VALUES,
  OPERATION_TYPES,
  PAYMENT_METHODS,
  PAYMENT_TYPES,
  THREE_DS_STATUSES,
  TRANS_STATUSES,
  TRANSACTION_MODES,
  TRANSACTION_STATUSES,
  ThreeDSecureChannel,
  VerificationMethod,
  type CardBrand,
  type ChargebackStatus,
  type InitiatedFrom,
  type OperationType,
  type PaymentMethod,
  type PaymentType,
  type ThreeDSecureStatus,
  type TransactionMode,
  type TransactionStatus,
  type TransStatus,
} from '../enums.js';
import type { Action } from '../dto/common.dto.js';
import type {
  CaptureResponse,
  CaptureSourceTransaction,
  RefundResponse,
  RefundSourceTransaction,
  ReleaseResponse,
  ReleaseSourceTransaction,
} from '../dto/operations.dto.js';
import type {
  MbWayDetails,
  MultibancoReference,
  PaymentResponse,
  ThreeDSecureInfo,
} from '../dto/payments.dto.js';
import type { ChargebackResponse } from '../dto/sandbox.dto.js';
import type { TransactionResponse, TransactionThreeDSecure } from '../dto/transactions.dto.js';
import { ActionSchema, EXAMPLE_IDS, EXAMPLE_TIME, ListEnvelopeFields } from './common.response.js';

@ApiSchema({ name: 'ThreeDSecureInfo', description: '3DS authentication started by a payment.' })
export class ThreeDSecureInfoSchema implements ThreeDSecureInfo {
  @ApiProperty({
    description: '3DS authentication GUID, handed to the SDK',
    example: EXAMPLE_IDS.threeDSecure,
  })
  id!: string;

  @ApiProperty({ enum: Object.values(VerificationMethod), example: 'ThreeDSecure' })
  verificationMethod!: VerificationMethod;

  @ApiProperty({ enum: Object.values(ThreeDSecureChannel), example: 'Browser' })
  channel!: ThreeDSecureChannel;

  @ApiProperty({
    description: '`Created` until the shopper authenticates',
    enum: THREE_DS_STATUSES,
    example: 'Created',
  })
  status!: ThreeDSecureStatus;
}

@ApiSchema({
  name: 'MultibancoReference',
  description: 'What the shopper pays at an ATM or in home banking.',
})
export class MultibancoReferenceSchema implements MultibancoReference {
  @ApiProperty({ description: 'Entity, 5 digits', example: '12345' })
  entity!: string;

  @ApiProperty({ description: 'Reference, 9 digits', example: '123456789' })
  reference!: string;

  @ApiProperty({ description: 'Decimal amount to pay', example: '25.00' })
  amount!: string;

  @ApiProperty({
    description: 'When the reference stops accepting payment',
    format: 'date-time',
    example: EXAMPLE_TIME,
  })
  expiresAt!: string;
}

@ApiSchema({ name: 'MbWayDetails', description: 'Where an MB WAY request went.' })
export class MbWayDetailsSchema implements MbWayDetails {
  @ApiProperty({ description: 'Phone, E.164', example: '+351912345678' })
  phoneNumber!: string;
}

@ApiSchema({
  name: 'PaymentResponse',
  description:
    'A payment (`POST /api/v2/payment` → 201, also while 3DS is pending with BYRD207; multibanco / mbway answer BYRD201).',
})
export class PaymentResponseSchema implements PaymentResponse {
  @ApiProperty({ enum: PAYMENT_TYPES, example: 'card' })
  type!: PaymentType;

  @ApiProperty({ description: 'ISO 4217 code', example: 'EUR' })
  currency!: string;

  @ApiProperty({ description: "Caller's reference", type: String, nullable: true, example: 'ORDER-1042' })
  orderRef!: string | null;

  @ApiProperty({ description: 'Processor; `SIMULATED` in the sandbox', example: 'SIMULATED' })
  acquirer!: string;

  @ApiProperty({ enum: CARD_BRANDS, nullable: true, example: 'VISA' })
  brand!: CardBrand | null;

  @ApiProperty({ enum: PAYMENT_METHODS, example: 'card' })
  paymentMethod!: PaymentMethod;

  @ApiProperty({
    description: 'As sent',
    type: String,
    nullable: true,
    example: 'https://shop.example.com/return',
  })
  redirectUrl!: string | null;

  @ApiProperty({ description: 'Payment fingerprint GUID', example: EXAMPLE_IDS.request })
  fingerprint!: string;

  @ApiProperty({ description: '3DS redirect when code is BYRD207', type: () => ActionSchema, nullable: true })
  action!: Action | null;

  @ApiProperty({ enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code!: ReturnCode;

  @ApiProperty({ description: 'Text of `code`', example: 'Operation successfully completed' })
  description!: string;

  @ApiProperty({
    description: 'Transaction status (`Created` while 3DS is pending)',
    enum: TRANSACTION_STATUSES,
    example: 'Success',
  })
  status!: TransactionStatus;

  @ApiProperty({
    description: 'Request GUID, handed to the SDK with `threeDSecure.id`',
    example: EXAMPLE_IDS.request,
  })
  requestId!: string;

  @ApiProperty({ description: 'When a pending payment lapses', format: 'date-time', example: EXAMPLE_TIME })
  expiresAt!: string;

  @ApiProperty({ description: 'Whether the card may be tokenized', example: false })
  acceptTokenization!: boolean;

  @ApiProperty({ enum: TRANSACTION_MODES, example: 'None' })
  transactionMode!: TransactionMode;

  @ApiProperty({ description: 'Transaction GUID', example: EXAMPLE_IDS.transaction })
  transactionId!: string;

  @ApiProperty({ description: 'Decimal amount', example: '25.00' })
  amount!: string;

  @ApiProperty({ description: 'Minor units', example: 2500 })
  isoAmount!: number;

  @ApiProperty({ description: 'Pre-authorisation only', example: false })
  isPreAuth!: boolean;

  @ApiProperty({
    description: 'Order the payment belongs to',
    type: String,
    nullable: true,
    example: EXAMPLE_IDS.order,
  })
  orderId!: string | null;

  @ApiProperty({ type: () => ThreeDSecureInfoSchema, nullable: true })
  threeDSecure!: ThreeDSecureInfo | null;

  @ApiPropertyOptional({ description: 'Multibanco payments', type: () => MultibancoReferenceSchema })
  multibanco?: MultibancoReference;

  @ApiPropertyOptional({ description: 'MB WAY payments', type: () => MbWayDetailsSchema })
  mbway?: MbWayDetails;
}

@ApiSchema({ name: 'TransactionThreeDSecure', description: '3DS result of a transaction.' })
export class TransactionThreeDSecureSchema implements TransactionThreeDSecure {
  @ApiProperty({ example: EXAMPLE_IDS.threeDSecure })
  id!: string;

  @ApiProperty({ enum: THREE_DS_STATUSES, example: 'Authorized' })
  status!: ThreeDSecureStatus;

  @ApiProperty({ enum: TRANS_STATUSES, nullable: true, example: 'Y' })
  transStatus!: TransStatus | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  transStatusReason!: string | null;

  @ApiProperty({ description: 'Electronic commerce indicator', type: String, nullable: true, example: '05' })
  eci!: string | null;

  @ApiProperty({
    description: 'CAVV/AAV',
    type: String,
    nullable: true,
    example: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
  })
  aav!: string | null;

  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_IDS.request })
  dsTransactionId!: string | null;

  @ApiProperty({ type: String, nullable: true, example: '2.2.0' })
  protocolVersion!: string | null;

  @ApiProperty({ example: 'ThreeDSecure' })
  verificationMethod!: string;
}

@ApiSchema({
  name: 'TransactionResponse',
  description: 'A transaction (`GET /api/v2/transactions/{transactionId}`).',
})
export class TransactionResponseSchema implements TransactionResponse {
  @ApiProperty({ example: EXAMPLE_IDS.transaction })
  transactionId!: string;

  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_IDS.order })
  orderId!: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'ORDER-1042' })
  orderRef!: string | null;

  @ApiProperty({ enum: TRANSACTION_STATUSES, example: 'Success' })
  status!: TransactionStatus;

  @ApiProperty({ enum: OPERATION_TYPES, example: 'Payment' })
  operationType!: OperationType;

  @ApiProperty({ enum: CARD_BRANDS, nullable: true, example: 'VISA' })
  brand!: CardBrand | null;

  @ApiProperty({ enum: PAYMENT_METHODS, example: 'card' })
  paymentMethod!: PaymentMethod;

  @ApiProperty({
    description: 'Return code of the latest outcome',
    enum: ALL_RETURN_CODES,
    example: 'BYRD200',
  })
  code!: ReturnCode;

  @ApiProperty({ example: 'Operation successfully completed' })
  description!: string;

  @ApiProperty({ example: '25.00' })
  amount!: string;

  @ApiProperty({ example: 2500 })
  isoAmount!: number;

  @ApiProperty({ example: 'EUR' })
  currency!: string;

  @ApiProperty({ example: 'SIMULATED' })
  acquirer!: string;

  @ApiProperty({ enum: TRANSACTION_MODES, example: 'None' })
  transactionMode!: TransactionMode;

  @ApiProperty({ example: false })
  isPreAuth!: boolean;

  @ApiProperty({ enum: INITIATED_FROM_VALUES, example: 'Server' })
  initiatedFrom!: InitiatedFrom;

  @ApiProperty({
    description: 'Payment or pre-auth this operation acts on',
    type: String,
    nullable: true,
    example: null,
  })
  sourceTransactionId!: string | null;

  @ApiProperty({ type: String, nullable: true, example: '424242******4242' })
  maskedCardNumber!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  tokenId!: string | null;

  @ApiProperty({ type: () => TransactionThreeDSecureSchema, nullable: true })
  threeDSecure!: TransactionThreeDSecure | null;

  @ApiPropertyOptional({ type: () => MultibancoReferenceSchema })
  multibanco?: MultibancoReference;

  @ApiPropertyOptional({ type: () => MbWayDetailsSchema })
  mbway?: MbWayDetails;

  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  updatedAt!: string;
}

@ApiSchema({
  name: 'TransactionListResponse',
  description: 'Transactions, newest first (`GET /api/v2/transactions`).',
})
export class TransactionListResponseSchema extends ListEnvelopeFields {
  @ApiProperty({ type: () => [TransactionResponseSchema] })
  data!: TransactionResponse[];
}

/** Fields every operation answer has. */
class OperationResponseFields {
  @ApiProperty({ description: 'BYRD200 on success', enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code!: ReturnCode;

  @ApiProperty({ example: 'Operation successfully completed' })
  description!: string;

  @ApiProperty({
    description: 'Status of the new transaction',
    enum: TRANSACTION_STATUSES,
    example: 'Success',
  })
  status!: TransactionStatus;

  @ApiProperty({ description: 'GUID of the new transaction', example: EXAMPLE_IDS.transaction })
  transactionId!: string;

  @ApiProperty({ example: '25.00' })
  amount!: string;

  @ApiProperty({ example: 2500 })
  isoAmount!: number;

  @ApiProperty({ example: 'EUR' })
  currency!: string;
}

@ApiSchema({ name: 'CaptureSourceTransaction', description: 'The pre-authorisation captured.' })
export class CaptureSourceTransactionSchema implements CaptureSourceTransaction {
  @ApiProperty({ example: EXAMPLE_IDS.sourceTransaction })
  transactionId!: string;
  @ApiProperty({ description: 'Pre-authorised amount', example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 2500 })
  isoAmount!: number;
  @ApiProperty({ description: 'Captured so far, this capture included', example: '25.00' })
  capturedAmount!: string;
  @ApiProperty({ example: 2500 })
  isoCapturedAmount!: number;
  @ApiProperty({ description: 'Still capturable', example: '0.00' })
  remainingAmount!: string;
  @ApiProperty({ example: 0 })
  isoRemainingAmount!: number;
}

@ApiSchema({ name: 'CaptureResponse', description: '`POST /api/v2/capture/{transactionId}` → 200.' })
export class CaptureResponseSchema extends OperationResponseFields implements CaptureResponse {
  @ApiProperty({ type: () => CaptureSourceTransactionSchema })
  sourceTransaction!: CaptureSourceTransaction;
}

@ApiSchema({ name: 'RefundSourceTransaction', description: 'The payment or capture refunded.' })
export class RefundSourceTransactionSchema implements RefundSourceTransaction {
  @ApiProperty({ example: EXAMPLE_IDS.sourceTransaction })
  transactionId!: string;
  @ApiProperty({ description: 'Original amount', example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 2500 })
  isoAmount!: number;
  @ApiProperty({ description: 'Refunded so far, this refund included', example: '25.00' })
  refundedAmount!: string;
  @ApiProperty({ example: 2500 })
  isoRefundedAmount!: number;
  @ApiProperty({ description: 'Still refundable', example: '0.00' })
  remainingAmount!: string;
  @ApiProperty({ example: 0 })
  isoRemainingAmount!: number;
}

@ApiSchema({ name: 'RefundResponse', description: '`POST /api/v2/refund/{transactionId}` → 200.' })
export class RefundResponseSchema extends OperationResponseFields implements RefundResponse {
  @ApiProperty({ type: () => RefundSourceTransactionSchema })
  sourceTransaction!: RefundSourceTransaction;
}

@ApiSchema({ name: 'ReleaseSourceTransaction', description: 'The pre-authorisation released.' })
export class ReleaseSourceTransactionSchema implements ReleaseSourceTransaction {
  @ApiProperty({ example: EXAMPLE_IDS.sourceTransaction })
  transactionId!: string;
  @ApiProperty({ description: 'Pre-authorised amount', example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 2500 })
  isoAmount!: number;
  @ApiProperty({ description: 'Released so far, this release included', example: '25.00' })
  releasedAmount!: string;
  @ApiProperty({ example: 2500 })
  isoReleasedAmount!: number;
  @ApiProperty({ description: 'Still held', example: '0.00' })
  remainingAmount!: string;
  @ApiProperty({ example: 0 })
  isoRemainingAmount!: number;
}

@ApiSchema({ name: 'ReleaseResponse', description: '`POST /api/v2/release/{transactionId}` → 200.' })
export class ReleaseResponseSchema extends OperationResponseFields implements ReleaseResponse {
  @ApiProperty({ type: () => ReleaseSourceTransactionSchema })
  sourceTransaction!: ReleaseSourceTransaction;
}

@ApiSchema({ name: 'ChargebackResponse', description: 'A sandbox chargeback.' })
export class ChargebackResponseSchema implements ChargebackResponse {
  @ApiProperty({ example: EXAMPLE_IDS.chargeback })
  chargebackId!: string;
  @ApiProperty({ example: EXAMPLE_IDS.transaction })
  transactionId!: string;
  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_IDS.order })
  orderId!: string | null;
  @ApiProperty({ enum: CHARGEBACK_STATUSES, example: 'Created' })
  status!: ChargebackStatus;
  @ApiProperty({ example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 2500 })
  isoAmount!: number;
  @ApiProperty({ example: 'EUR' })
  currency!: string;
  @ApiProperty({ type: String, nullable: true, example: 'fraud' })
  reason!: string | null;
  @ApiProperty({ enum: PAYMENT_METHODS, example: 'card' })
  paymentMethod!: PaymentMethod;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  updatedAt!: string;
}
