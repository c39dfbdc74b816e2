import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CHECKOUT_KEY_HEADER } from '@byrd/contracts';
import { Public } from '@byrd/platform';
import { CheckoutKey, GuidParam, orderNotFound } from '../common/checkout-access.js';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard.js';
import { CancelCheckoutOrder } from './cancel-order.usecase.js';
import { GetCheckoutOrder } from './get-checkout-order.usecase.js';

/** The hosted form's order calls; the checkout key in `x-checkout-key` is the credential. */
@ApiTags('checkout')
@ApiHeader({ name: CHECKOUT_KEY_HEADER, required: true, description: "The order's checkout key" })
@Public()
@UseGuards(RateLimitGuard)
@Controller('checkout/api/v2/orders')
export class CheckoutOrdersController {
  constructor(
    private readonly getOrder: GetCheckoutOrder,
    private readonly cancelOrder: CancelCheckoutOrder,
  ) {}

  @Get(':orderId')
  @ApiOperation({ summary: 'The order the form renders: amount, merchant, payment methods', security: [] })
  read(@Param('orderId', new GuidParam(orderNotFound)) orderId: string, @CheckoutKey() checkoutKey: string) {
    return this.getOrder.execute({ orderId, checkoutKey });
  }

  @Post(':orderId/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: "The shopper's cancel button: the order becomes canceled", security: [] })
  cancel(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
  ) {
    return this.cancelOrder.execute({ orderId, checkoutKey });
  }
}
