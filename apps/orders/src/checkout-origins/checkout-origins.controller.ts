import { Body, Controller, Get, HttpCode, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CheckoutOriginsRequest,
  CheckoutOriginsResponseSchema,
  type CheckoutOriginsResponse,
} from '@byrd/contracts';
import { ApiErrors, CurrentMerchant, NOT_FOUND, type MerchantContext } from '@byrd/platform';
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
  @ApiOkResponse({ type: CheckoutOriginsResponseSchema })
  // The merchant's record is gone (deleted while its key still worked).
  @ApiErrors(NOT_FOUND)
  read(@CurrentMerchant() merchant: MerchantContext): Promise<CheckoutOriginsResponse> {
    return this.getOrigins.execute(merchant);
  }

  @Put()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replace them (https origins, http too for sandbox merchants; [] clears the list)',
  })
  @ApiOkResponse({ type: CheckoutOriginsResponseSchema })
  @ApiErrors(NOT_FOUND)
  replace(
    @CurrentMerchant() merchant: MerchantContext,
    @Body() body: CheckoutOriginsRequest,
  ): Promise<CheckoutOriginsResponse> {
    return this.setOrigins.execute(merchant, body.origins);
  }
}
