import { Body, Controller, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CHARGEBACK_ACTIONS,
  ChargebackResponseSchema,
  OpenChargebackRequest,
  type ChargebackAction,
  type ChargebackResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  GuidParam,
  idempotencyKeyOf,
  type AuthenticatedRequest,
  type MerchantContext,
} from '@byrd/platform';
import { GetChargeback } from '../chargebacks/get-chargeback.usecase.js';
import { MoveChargeback } from '../chargebacks/move-chargeback.usecase.js';
import { OpenChargeback } from '../chargebacks/open-chargeback.usecase.js';
import { ParseActionPipe } from './one-of.pipe.js';
import { SANDBOX_ONLY, SandboxOnlyGuard } from './sandbox-only.guard.js';

@ApiTags('sandbox')
@Controller('api/v2/sandbox/chargebacks')
@UseGuards(SandboxOnlyGuard)
@ApiErrors(SANDBOX_ONLY)
export class SandboxChargebacksController {
  constructor(
    private readonly openChargeback: OpenChargeback,
    private readonly moveChargeback: MoveChargeback,
    private readonly getChargeback: GetChargeback,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Open a chargeback on a successful payment or capture (chargeback.created)' })
  @ApiCreatedResponse({ type: ChargebackResponseSchema })
  @ApiErrors({ 404: ['BYRD901'], 422: ['BYRD205'] })
  open(
    @CurrentMerchant() merchant: MerchantContext,
    @Req() request: AuthenticatedRequest,
    @Body() body: OpenChargebackRequest,
  ): Promise<ChargebackResponse> {
    return this.openChargeback.execute(merchant.merchantId, body, idempotencyKeyOf(request));
  }

  @Get(':chargebackId')
  @ApiOperation({ summary: 'Read a chargeback' })
  @ApiOkResponse({ type: ChargebackResponseSchema })
  @ApiErrors({ 404: ['BYRD901'] })
  read(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('chargebackId', GuidParam.notFound('Chargeback')) chargebackId: string,
  ): Promise<ChargebackResponse> {
    return this.getChargeback.execute(merchant.merchantId, chargebackId);
  }

  @Post(':chargebackId/:action')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Move a chargeback: disputing, pendingaction, won, lost or closed (chargeback.<action>); 422 when illegal',
  })
  @ApiOkResponse({ type: ChargebackResponseSchema })
  @ApiErrors({ 404: ['BYRD901'], 422: ['BYRD205'] })
  move(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('chargebackId', GuidParam.notFound('Chargeback')) chargebackId: string,
    @Param('action', new ParseActionPipe(CHARGEBACK_ACTIONS)) action: ChargebackAction,
    @Req() request: AuthenticatedRequest,
  ): Promise<ChargebackResponse> {
    return this.moveChargeback.execute(merchant.merchantId, chargebackId, action, idempotencyKeyOf(request));
  }
}
