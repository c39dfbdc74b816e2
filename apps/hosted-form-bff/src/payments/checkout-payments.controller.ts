import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CHECKOUT_KEY_HEADER, CheckoutPaymentRequest } from '@byrd/contracts';
import { Public } from '@byrd/platform';
import { CheckoutKey, GuidParam, orderNotFound, RequestId } from '../common/checkout-access.js';
import { RateLimitGuard, RateLimited } from '../rate-limit/rate-limit.guard.js';
import { GetCheckoutPayment, paymentNotFound } from './get-payment.usecase.js';
import { PayCheckoutOrder } from './pay-order.usecase.js';

/** The hosted form's payment calls; the checkout key in `x-checkout-key` is the credential. */
@ApiTags('checkout')
@ApiHeader({ name: CHECKOUT_KEY_HEADER, required: true, description: "The order's checkout key" })
@Public()
@UseGuards(RateLimitGuard)
@Controller('checkout/api/v2/orders/:orderId/payments')
export class CheckoutPaymentsController {
  constructor(
    private readonly payOrder: PayCheckoutOrder,
    private readonly getPayment: GetCheckoutPayment,
  ) {}

  @Post()
  @HttpCode(201)
  @RateLimited('payments')
  @ApiOperation({
    summary:
      'Pay the order by card, Multibanco or MB WAY (BYRD207 + threeDSecure when the shopper must authenticate)',
    security: [],
  })
  pay(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
    @Body() body: CheckoutPaymentRequest,
    @RequestId() requestId: string,
  ) {
    return this.payOrder.execute({ orderId, checkoutKey }, body, requestId);
  }

  @Get(':transactionId')
  @ApiOperation({
    summary: 'A payment of the order, as the waiting and landing pages follow it',
    security: [],
  })
  read(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @Param('transactionId', new GuidParam(paymentNotFound)) transactionId: string,
    @CheckoutKey() checkoutKey: string,
  ) {
    return this.getPayment.execute({ orderId, checkoutKey }, transactionId);
  }
}
