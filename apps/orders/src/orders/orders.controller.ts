import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreateOrderRequest } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { CreateOrder } from './create-order.usecase.js';
import { GetOrder } from './get-order.usecase.js';

@ApiTags('orders')
@Controller('api/v2/orders')
export class OrdersController {
  constructor(
    private readonly createOrder: CreateOrder,
    private readonly getOrder: GetOrder,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create an order; its checkoutKey opens the hosted form' })
  create(@CurrentMerchant() merchant: MerchantContext, @Body() body: CreateOrderRequest) {
    return this.createOrder.execute(merchant, body);
  }

  @Get(':orderId')
  @ApiOperation({
    summary: 'Read an order, its status and transactions (validate a payment after the redirect)',
  })
  read(@CurrentMerchant() merchant: MerchantContext, @Param('orderId') orderId: string) {
    return this.getOrder.execute(merchant.merchantId, orderId);
  }
}
