import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CHECKOUT_KEY_HEADER,
  CheckoutPaymentRequest,
  CheckoutPaymentViewSchema,
  type CheckoutPaymentView,
} from '@byrd/contracts';
import { ApiErrors, GuidParam, Public } from '@byrd/platform';
import { CHECKOUT_API_ERRORS, CheckoutKey, orderNotFound, RequestId } from '../common/checkout-access.js';
import { RateLimitGuard, RateLimited } from '../rate-limit/rate-limit.guard.js';
import { GetCheckoutPayment, paymentNotFound } from './get-payment.usecase.js';
import { PayCheckoutOrder } from './pay-order.usecase.js';

/** The hosted form's payment calls; the checkout key in `x-checkout-key` is the credential. */
@ApiTags('checkout')
@ApiHeader({ name: CHECKOUT_KEY_HEADER, required: true, description: "The order's checkout key" })
@ApiErrors(CHECKOUT_API_ERRORS)
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
  @ApiCreatedResponse({
    type: CheckoutPaymentViewSchema,
    description: 'Also a denied or failed payment (its code says)',
  })
  // The order closed or taking no other payment, and the payments service's refusals.
  @ApiErrors({ 422: ['BYRD205', 'BYRD240', 'BYRD291', 'BYRD292'] })
  pay(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
    @Body() body: CheckoutPaymentRequest,
    @RequestId() requestId: string,
  ): Promise<CheckoutPaymentView> {
    return this.payOrder.execute({ orderId, checkoutKey }, body, requestId);
  }

  @Get(':transactionId')
  @ApiOperation({
    summary: 'A payment of the order, as the waiting and landing pages follow it',
    security: [],
  })
  @ApiOkResponse({ type: CheckoutPaymentViewSchema })
  read(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @Param('transactionId', new GuidParam(paymentNotFound)) transactionId: string,
    @CheckoutKey() checkoutKey: string,
  ): Promise<CheckoutPaymentView> {
    return this.getPayment.execute({ orderId, checkoutKey }, transactionId);
  }
}
