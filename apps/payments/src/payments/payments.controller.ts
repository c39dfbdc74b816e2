import { Body, Controller, HttpCode, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreatePaymentQuery, CreatePaymentRequest, isAsyncPaymentType } from '@byrd/contracts';
import { AllowCheckoutKey, ApiError, ErrorKind, type AuthenticatedRequest } from '@byrd/platform';
import { CreatePayment } from './create-payment.usecase.js';
import { CreateAsyncPayment } from '../async/create-async-payment.usecase.js';

@ApiTags('payments')
@Controller('api/v2/payment')
export class PaymentsController {
  constructor(
    private readonly createPayment: CreatePayment,
    private readonly createAsyncPayment: CreateAsyncPayment,
  ) {}

  @Post()
  @HttpCode(201)
  @AllowCheckoutKey()
  @ApiOperation({
    summary:
      'Create a payment: card (BYRD207 with a 3DS redirect when the shopper must authenticate), or multibanco / mbway (BYRD201 Processing until the shopper pays)',
  })
  create(
    @Req() request: AuthenticatedRequest,
    @Query() query: CreatePaymentQuery,
    @Body() body: CreatePaymentRequest,
  ) {
    const actor = request.merchant
      ? { merchant: request.merchant }
      : query.checkoutKey
        ? { checkoutKey: query.checkoutKey }
        : null;
    if (!actor) throw new ApiError(ErrorKind.Unauthorized, 'The x-api-key header is missing');
    const useCase = isAsyncPaymentType(body.type) ? this.createAsyncPayment : this.createPayment;
    return useCase.execute(actor, body, String(request.id));
  }
}
