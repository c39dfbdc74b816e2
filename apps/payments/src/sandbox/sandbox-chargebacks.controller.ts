import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CHARGEBACK_ACTIONS, OpenChargebackRequest, type ChargebackAction } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { GetChargeback } from '../chargebacks/get-chargeback.usecase.js';
import { MoveChargeback } from '../chargebacks/move-chargeback.usecase.js';
import { OpenChargeback } from '../chargebacks/open-chargeback.usecase.js';
import { ParseActionPipe } from './one-of.pipe.js';
import { SandboxOnlyGuard } from './sandbox-only.guard.js';

@ApiTags('sandbox')
@Controller('api/v2/sandbox/chargebacks')
@UseGuards(SandboxOnlyGuard)
export class SandboxChargebacksController {
  constructor(
    private readonly openChargeback: OpenChargeback,
    private readonly moveChargeback: MoveChargeback,
    private readonly getChargeback: GetChargeback,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Open a chargeback on a successful payment or capture (chargeback.created)' })
  open(@CurrentMerchant() merchant: MerchantContext, @Body() body: OpenChargebackRequest) {
    return this.openChargeback.execute(merchant.merchantId, body);
  }

  @Get(':chargebackId')
  @ApiOperation({ summary: 'Read a chargeback' })
  read(@CurrentMerchant() merchant: MerchantContext, @Param('chargebackId') chargebackId: string) {
    return this.getChargeback.execute(merchant.merchantId, chargebackId);
  }

  @Post(':chargebackId/:action')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Move a chargeback: disputing, pendingaction, won, lost or closed (chargeback.<action>); 422 when illegal',
  })
  move(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('chargebackId') chargebackId: string,
    @Param('action', new ParseActionPipe(CHARGEBACK_ACTIONS)) action: ChargebackAction,
  ) {
    return this.moveChargeback.execute(merchant.merchantId, chargebackId, action);
  }
}
