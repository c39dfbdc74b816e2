import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ListTransactionsQuery,
  TransactionListResponseSchema,
  TransactionResponseSchema,
  type TransactionListResponse,
  type TransactionResponse,
} from '@byrd/contracts';
import { ApiErrors, CurrentMerchant, NOT_FOUND, type MerchantContext, GuidParam } from '@byrd/platform';
import { QueryTransactions } from './query-transactions.usecase.js';

@ApiTags('transactions')
@Controller('api/v2/transactions')
export class TransactionsController {
  constructor(private readonly transactions: QueryTransactions) {}

  @Get(':transactionId')
  @ApiOperation({
    summary: 'Read a transaction: status, operationType, brand, code, amounts and the 3DS result',
  })
  @ApiOkResponse({ type: TransactionResponseSchema })
  @ApiErrors(NOT_FOUND)
  read(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('transactionId', GuidParam.notFound('Transaction')) transactionId: string,
  ): Promise<TransactionResponse> {
    return this.transactions.one(merchant.merchantId, transactionId);
  }

  @Get()
  @ApiOperation({ summary: 'List transactions by orderId and/or orderRef, newest first' })
  @ApiOkResponse({ type: TransactionListResponseSchema })
  list(
    @CurrentMerchant() merchant: MerchantContext,
    @Query() query: ListTransactionsQuery,
  ): Promise<TransactionListResponse> {
    return this.transactions.list(merchant.merchantId, query);
  }
}
