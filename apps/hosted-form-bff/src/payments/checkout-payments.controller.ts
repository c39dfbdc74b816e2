import { Body, Controller, Get, Headers, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CHECKOUT_KEY_HEADER,
  CheckoutPaymentRequest,
  HttpHeaders,
  MAX_IDEMPOTENCY_KEY_LENGTH,
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
  @ApiHeader({
    name: HttpHeaders.IdempotencyKey,
    required: false,
    description:
      "The page's key for this payment attempt (one method and its inputs), 1 to 255 characters: a Multibanco or MB WAY attempt sent again with it answers the payment it made, as it stands (one reference, one MB WAY request), unless that one ended without money",
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  })
  // The order closed or taking no other payment, and the payments service's refusals (400 BYRD900,
  // the platform's, also answers the key sent again with another phone number).
  @ApiErrors({ 422: ['BYRD205', 'BYRD240', 'BYRD291', 'BYRD292'] })
  pay(
    @Param('orderId', new GuidParam(orderNotFound)) orderId: string,
    @CheckoutKey() checkoutKey: string,
    @Body() body: CheckoutPaymentRequest,
    @RequestId() requestId: string,
    @Headers(HttpHeaders.IdempotencyKey) idempotencyKey?: string,
  ): Promise<CheckoutPaymentView> {
    return this.payOrder.execute({ orderId, checkoutKey }, body, requestId, idempotencyKey);
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
