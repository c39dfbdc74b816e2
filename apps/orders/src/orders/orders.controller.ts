import { Body, Controller, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CreateOrderRequest,
  OrderDetailsResponseSchema,
  OrderResponseSchema,
  type OrderDetailsResponse,
  type OrderResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  GuidParam,
  IDEMPOTENCY_HEADER,
  NOT_FOUND,
  type MerchantContext,
} from '@byrd/platform';
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
  @ApiCreatedResponse({ type: OrderResponseSchema })
  create(
    @CurrentMerchant() merchant: MerchantContext,
    @Body() body: CreateOrderRequest,
    @Headers(IDEMPOTENCY_HEADER) idempotencyKey?: string,
  ): Promise<OrderResponse> {
    return this.createOrder.execute(merchant, body, idempotencyKey);
  }

  @Get(':orderId')
  @ApiOperation({
    summary: 'Read an order, its status and transactions (validate a payment after the redirect)',
  })
  @ApiOkResponse({ type: OrderDetailsResponseSchema })
  @ApiErrors(NOT_FOUND)
  read(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('orderId', GuidParam.notFound('Order')) orderId: string,
  ): Promise<OrderDetailsResponse> {
    return this.getOrder.execute(merchant.merchantId, orderId);
  }
}
