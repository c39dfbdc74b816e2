import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CaptureRequest,
  CaptureResponseSchema,
  RefundRequest,
  RefundResponseSchema,
  ReleaseRequest,
  ReleaseResponseSchema,
  type CaptureResponse,
  type OperationAmountRequest,
  type RefundResponse,
  type ReleaseResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  type AuthenticatedRequest,
  type MerchantContext,
  GuidParam,
  idempotencyKeyOf,
} from '@byrd/platform';
import type { FollowUpOperation } from './operation-rules.js';
import { RunOperation, type OperationResponses } from './run-operation.usecase.js';
import { requestGuidOf } from '../transactions/request-id.js';

@ApiTags('operations')
@Controller('api/v2')
export class OperationsController {
  constructor(private readonly operations: RunOperation) {}

  @Post('capture/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Capture (part of) a successful pre-authorisation' })
  @ApiOkResponse({ type: CaptureResponseSchema, description: 'Also a denied capture (its code says)' })
  @ApiErrors({ 404: ['BYRD901'], 422: ['BYRD205'] })
  capture(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId', GuidParam.notFound('Transaction')) id: string,
    @Body() body: CaptureRequest,
    @Req() request: AuthenticatedRequest,
  ): Promise<CaptureResponse> {
    return this.run(merchant, 'Capture', id, body, request);
  }

  @Post('refund/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Refund (part of) a payment or capture; BYRD231 beyond the remaining balance' })
  @ApiOkResponse({ type: RefundResponseSchema, description: 'Also a denied refund (its code says)' })
  @ApiErrors({ 404: ['BYRD901'], 422: ['BYRD205', 'BYRD230', 'BYRD231'] })
  refund(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId', GuidParam.notFound('Transaction')) id: string,
    @Body() body: RefundRequest,
    @Req() request: AuthenticatedRequest,
  ): Promise<RefundResponse> {
    return this.run(merchant, 'Refund', id, body, request);
  }

  @Post('release/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Release (void) an uncaptured pre-authorisation' })
  @ApiOkResponse({ type: ReleaseResponseSchema })
  @ApiErrors({ 404: ['BYRD901'], 422: ['BYRD205'] })
  release(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId', GuidParam.notFound('Transaction')) id: string,
    @Body() body: ReleaseRequest,
    @Req() request: AuthenticatedRequest,
  ): Promise<ReleaseResponse> {
    return this.run(merchant, 'Release', id, body, request);
  }

  /** An operation under the request's id and its idempotency-key (a retry finds what it started). */
  private run<O extends FollowUpOperation>(
    merchant: MerchantContext,
    operation: O,
    id: string,
    body: OperationAmountRequest,
    request: AuthenticatedRequest,
  ): Promise<OperationResponses[O]> {
    return this.operations.execute(
      merchant,
      operation,
      id,
      body,
      requestGuidOf(request),
      idempotencyKeyOf(request),
    );
  }
}
