import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CHECKOUT_KEY_HEADER,
  CheckoutCancelResultSchema,
  CheckoutOrderViewSchema,
  type CheckoutCancelResult,
  type CheckoutOrderView,
} from '@byrd/contracts';
import { ApiErrors, GuidParam, Public } from '@byrd/platform';
import { CHECKOUT_API_ERRORS, CheckoutKey, orderNotFound } from '../common/checkout-access.js';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard.js';
import { RequestCheckoutCancel } from './request-checkout-cancel.usecase.js';
import { GetCheckoutOrderView } from './get-checkout-order-view.usecase.js';

/** The hosted form's order calls; the checkout key in `x-checkout-key` is the credential. */
@ApiTags('checkout')
@ApiHeader({ name: CHECKOUT_KEY_HEADER, required: true, description: "The order's checkout key" })
@ApiErrors(CHECKOUT_API_ERRORS)
@Public()
@UseGuards(RateLimitGuard)
@Controller('checkout/api/v2/orders')
export class CheckoutOrdersController {
  constructor(
    private readonly getOrder: GetCheckoutOrderView,
    private readonly cancelOrder: RequestCheckoutCancel,
  ) {}

  @Get(':orderId')
  @ApiOperation({ summary: 'The order the form renders: amount, merchant, payment methods', security: [] })
  @ApiOkResponse({ type: CheckoutOrderViewSchema })
  read(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
  ): Promise<CheckoutOrderView> {
    return this.getOrder.execute({ orderId, checkoutKey });
  }

  @Post(':orderId/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: "The shopper's cancel button: the order becomes canceled (expired, once its time is up)",
    security: [],
  })
  @ApiOkResponse({ type: CheckoutCancelResultSchema })
  @ApiErrors({ 422: ['BYRD205'] })
  cancel(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
  ): Promise<CheckoutCancelResult> {
    return this.cancelOrder.execute({ orderId, checkoutKey });
  }
}
