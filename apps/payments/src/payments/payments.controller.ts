import { Body, Controller, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CompletePaymentRequest,
  CreatePaymentQuery,
  CreatePaymentRequest,
  isAsyncPaymentType,
  PaymentResponseSchema,
  type PaymentResponse,
} from '@byrd/contracts';
import {
  AllowCheckoutKey,
  ApiError,
  ApiErrors,
  ErrorKind,
  type ErrorCodes,
  idempotencyKeyOf,
  type AuthenticatedRequest,
  GuidParam,
} from '@byrd/platform';
import { CheckoutPaymentAttempt } from './checkout-attempt-limit.guard.js';
import { CreatePayment, type PaymentActor } from './create-payment.usecase.js';
import { PayPayment } from './pay-payment.usecase.js';
import { requestGuidOf } from '../transactions/request-id.js';
import { CreateAsyncPayment } from '../async/create-async-payment.usecase.js';

/**
 * What a payment's use cases refuse: the order taking no other payment, an expired or unusable token,
 * a method the merchant has not, the acquirer's preparation (422); a browser's `?checkoutKey=` attempts
 * over their limit (429); the tokens or orders service, or the rate-limit store, down.
 */
const PAYMENT_REFUSALS: ErrorCodes = {
  404: ['BYRD901'],
  422: ['BYRD205', 'BYRD240', 'BYRD291', 'BYRD292'],
  429: ['BYRD206'],
  503: ['BYRD999'],
};

/** The OpenAPI description of the routes a browser may call with `?checkoutKey=`. */
const CHECKOUT_KEY_LIMITS =
  "With `?checkoutKey=` (a browser paying that order, no API key) each call counts as a payment attempt, as on the hosted form (but a card payment created without its card counts only at its /pay, its creates counted apart, per client address and per order, to RATE_LIMIT_PAYMENTS_MAX and RATE_LIMIT_ORDER_PAYMENTS_MAX too, and a repeat of a request its idempotency-key already answered is replayed, uncounted, even past the limit): RATE_LIMIT_PAYMENTS_MAX per client address and RATE_LIMIT_ORDER_PAYMENTS_MAX per order per RATE_LIMIT_WINDOW_MS, beyond which it is refused with 429 BYRD206 and Retry-After before anything is done. Calls with the merchant's x-api-key are not limited this way. A page on any origin may call it so (CORS: the preflight is answered, `access-control-allow-origin: *`, content-type, idempotency-key and the other headers asked for except x-api-key, no credentials); a request with x-api-key gets no CORS header, as a merchant's secret key must never be used from a browser.";

@ApiTags('payments')
@Controller('api/v2/payment')
export class PaymentsController {
  constructor(
    private readonly createPayment: CreatePayment,
    private readonly createAsyncPayment: CreateAsyncPayment,
    private readonly payPayment: PayPayment,
  ) {}

  @Post()
  @HttpCode(201)
  @AllowCheckoutKey()
  @CheckoutPaymentAttempt('body')
  @ApiOperation({
    summary:
      'Create a payment: card (BYRD207 with a 3DS redirect when the shopper must authenticate), or multibanco / mbway (BYRD201 Processing until the shopper pays)',
    description:
      CHECKOUT_KEY_LIMITS +
      " Its `redirectUrl` must be on the origin of the order's redirectUrl or one of the merchant's checkout origins (else 400 BYRD900); left out, the order's is used. Its `orderRef` and `isPreAuth` are the order's: a body sending others is refused with 400 BYRD900. A multibanco or mbway payment of an order asking for a pre-authorisation (`paymentOptions.cardOptions.isPreAuth`, unless the merchant's own request sends `isPreAuth: false`) is refused with 422 BYRD292 before any reference is drawn or MB WAY request sent: those methods settle in full.",
  })
  @ApiCreatedResponse({
    type: PaymentResponseSchema,
    description: 'Also a denied or failed payment (its code says)',
  })
  @ApiErrors(PAYMENT_REFUSALS)
  create(
    @Req() request: AuthenticatedRequest,
    @Query() query: CreatePaymentQuery,
    @Body() body: CreatePaymentRequest,
  ): Promise<PaymentResponse> {
    const actor = actorOf(request, query);
    if (isAsyncPaymentType(body.type))
      return this.createAsyncPayment.execute(actor, body, requestGuidOf(request), idempotencyKeyOf(request));
    return this.createPayment.execute(actor, body, requestGuidOf(request), idempotencyKeyOf(request));
  }

  @Post(':transactionId/pay')
  @HttpCode(200)
  @AllowCheckoutKey()
  @CheckoutPaymentAttempt('payment')
  @ApiOperation({
    summary: 'Second step of a card payment created without a card: the card is charged now',
    description: CHECKOUT_KEY_LIMITS,
  })
  @ApiOkResponse({ type: PaymentResponseSchema })
  @ApiErrors(PAYMENT_REFUSALS)
  pay(
    @Req() request: AuthenticatedRequest,
    @Query() query: CreatePaymentQuery,
    @Param('transactionId', GuidParam.notFound('Payment')) transactionId: string,
    @Body() body: CompletePaymentRequest,
  ): Promise<PaymentResponse> {
    return this.payPayment.execute(actorOf(request, query), transactionId, body, idempotencyKeyOf(request));
  }
}

/** A merchant's backend (API key), or a browser holding an order's checkout key. */
function actorOf(request: AuthenticatedRequest, query: CreatePaymentQuery): PaymentActor {
  if (request.merchant) return { merchant: request.merchant };
  if (query.checkoutKey) return { checkoutKey: query.checkoutKey };
  throw new ApiError(ErrorKind.Unauthorized, 'The x-api-key header is missing');
}
