import { Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ASYNC_PAYMENT_SIMULATIONS,
  TransactionResponseSchema,
  type AsyncPaymentSimulation,
  type TransactionResponse,
} from '@byrd/contracts';
import { ApiErrors, CurrentMerchant, type MerchantContext, GuidParam } from '@byrd/platform';
import { SettleAsyncPayment } from '../async/settle-async-payment.usecase.js';
import { ParseActionPipe } from './one-of.pipe.js';
import { SANDBOX_ONLY, SandboxOnlyGuard } from './sandbox-only.guard.js';

@ApiTags('sandbox')
@Controller('api/v2/sandbox/payments')
@UseGuards(SandboxOnlyGuard)
export class SandboxPaymentsController {
  constructor(private readonly settle: SettleAsyncPayment) {}

  @Post(':transactionId/:action')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Act as the shopper of a pending multibanco / mbway payment: pay (BYRD200), refuse in MB WAY (BYRD208) or let it expire (BYRD205); pay after we voided it (or its MB WAY request ended Error) is recorded and refunded at once',
  })
  @ApiOkResponse({ type: TransactionResponseSchema, description: 'The payment, settled' })
  @ApiErrors({ ...SANDBOX_ONLY, 404: ['BYRD901'], 422: ['BYRD205'] })
  simulate(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId', GuidParam.notFound('Transaction')) transactionId: string,
    @Param('action', new ParseActionPipe(ASYNC_PAYMENT_SIMULATIONS)) action: AsyncPaymentSimulation,
  ): Promise<TransactionResponse> {
    return this.settle.execute(merchant.merchantId, transactionId, action);
  }
}
