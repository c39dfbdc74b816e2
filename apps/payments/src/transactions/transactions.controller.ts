import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListTransactionsQuery } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { QueryTransactions } from './query-transactions.usecase.js';

@ApiTags('transactions')
@Controller('api/v2/transactions')
export class TransactionsController {
  constructor(private readonly transactions: QueryTransactions) {}

  @Get(':transactionId')
  @ApiOperation({
    summary: 'Read a transaction: status, operationType, brand, code, amounts and the 3DS result',
  })
  read(@CurrentMerchant() merchant: MerchantContext, @Param('transactionId') transactionId: string) {
    return this.transactions.one(merchant.merchantId, transactionId);
  }

  @Get()
  @ApiOperation({ summary: 'List transactions by orderId and/or orderRef, newest first' })
  list(@CurrentMerchant() merchant: MerchantContext, @Query() query: ListTransactionsQuery) {
    return this.transactions.list(merchant.merchantId, query);
  }
}
