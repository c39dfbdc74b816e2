import { Body, Controller, Get, HttpCode, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CheckoutOriginsRequest, type CheckoutOriginsResponse } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { GetCheckoutOrigins, SetCheckoutOrigins } from './checkout-origins.usecases.js';

@ApiTags('checkout origins')
@Controller('api/v2/checkout-origins')
export class CheckoutOriginsController {
  constructor(
    private readonly getOrigins: GetCheckoutOrigins,
    private readonly setOrigins: SetCheckoutOrigins,
  ) {}

  @Get()
  @ApiOperation({
    summary: "The origins of the merchant's sites the hosted form may return to and be framed by",
  })
  read(@CurrentMerchant() merchant: MerchantContext): Promise<CheckoutOriginsResponse> {
    return this.getOrigins.execute(merchant);
  }

  @Put()
  @HttpCode(200)
  @ApiOperation({ summary: 'Replace them (https origins; [] clears the list)' })
  replace(
    @CurrentMerchant() merchant: MerchantContext,
    @Body() body: CheckoutOriginsRequest,
  ): Promise<CheckoutOriginsResponse> {
    return this.setOrigins.execute(merchant, body.origins);
  }
}
