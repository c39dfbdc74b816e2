import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CaptureRequest, RefundRequest, ReleaseRequest } from '@byrd/contracts';
import { CurrentMerchant, type AuthenticatedRequest, type MerchantContext } from '@byrd/platform';
import { RunOperation } from './run-operation.usecase.js';
import { requestGuidOf } from '../transactions/request-id.js';

@ApiTags('operations')
@Controller('api/v2')
export class OperationsController {
  constructor(private readonly operations: RunOperation) {}

  @Post('capture/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Capture (part of) a successful pre-authorisation' })
  capture(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId') id: string,
    @Body() body: CaptureRequest,
    @Req() request: AuthenticatedRequest,
  ) {
    return this.operations.execute(merchant, 'Capture', id, body, requestGuidOf(request));
  }

  @Post('refund/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Refund (part of) a payment or capture; BYRD231 beyond the remaining balance' })
  refund(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId') id: string,
    @Body() body: RefundRequest,
    @Req() request: AuthenticatedRequest,
  ) {
    return this.operations.execute(merchant, 'Refund', id, body, requestGuidOf(request));
  }

  @Post('release/:transactionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Release (void) an uncaptured pre-authorisation' })
  release(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId') id: string,
    @Body() body: ReleaseRequest,
    @Req() request: AuthenticatedRequest,
  ) {
    return this.operations.execute(merchant, 'Release', id, body, requestGuidOf(request));
  }
}
