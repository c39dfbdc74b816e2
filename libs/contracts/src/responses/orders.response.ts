import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import { OPERATION_TYPES, ORDER_STATUSES, PAYMENT_METHODS, TRANSACTION_STATUSES } from '../enums.js';
import type { OperationType, OrderStatus, PaymentMethod, TransactionStatus } from '../enums.js';
import type { CheckoutOriginsResponse } from '../dto/checkout-origins.dto.js';
import type {
  OrderDetailsResponse,
  OrderOptions,
  OrderResponse,
  OrderTransaction,
  PaymentOptions,
  Shopper,
} from '../dto/orders.dto.js';
import { EXAMPLE_IDS, EXAMPLE_TIME } from './common.response.js';

/**
 * An object echoed as the client sent it: the fields of its request schema, each possibly null (the
 * public .NET client sends null for what it leaves out), so it is described, not constrained.
 */
function echoed(requestSchema: string) {
  return {
    description: `As sent: the fields of ${requestSchema} in the request (null when it sent none)`,
    type: 'object',
    additionalProperties: true,
    nullable: true,
  } as const;
}

@ApiSchema({ name: 'OrderResponse', description: 'An order as created (`POST /api/v2/orders` → 201).' })
export class OrderResponseSchema implements OrderResponse {
  @ApiProperty({ description: 'Order GUID', format: 'uuid', example: EXAMPLE_IDS.order })
  orderId!: string;

  @ApiProperty({ description: 'Creation time, ISO 8601 UTC', format: 'date-time', example: EXAMPLE_TIME })
  orderDate!: string;

  @ApiProperty({
    description: 'Expiry time, ISO 8601 UTC',
    format: 'date-time',
    example: '2026-11-25T10:30:30.000Z',
  })
  expiresAt!: string;

  @ApiProperty({
    description: 'Hosted form address, ready to open',
    example: `https://checkout.example.com/checkout/${EXAMPLE_IDS.order}?checkoutKey=${EXAMPLE_IDS.checkoutKey}`,
  })
  checkoutUrl!: string;

  @ApiProperty({
    description: 'GUID the hosted form needs with the order id',
    example: EXAMPLE_IDS.checkoutKey,
  })
  checkoutKey!: string;

  @ApiProperty({ enum: ORDER_STATUSES, example: 'created' })
  status!: OrderStatus;

  @ApiProperty({ description: "Decimal amount with the currency's decimals", example: '25.00' })
  amount!: string;

  @ApiProperty({ description: 'Minor units', example: 2500 })
  isoAmount!: number;

  @ApiProperty({ description: 'ISO 4217 code', example: 'EUR' })
  currency!: string;

  @ApiProperty({ description: "Caller's reference", type: String, nullable: true, example: 'ORDER-1042' })
  orderRef!: string | null;

  @ApiProperty(echoed('ShopperDto'))
  shopper!: Shopper | null;

  @ApiProperty(echoed('OrderOptionsDto'))
  orderOptions!: OrderOptions | null;

  @ApiProperty(echoed('PaymentOptionsDto'))
  paymentOptions!: PaymentOptions | null;

  @ApiProperty({
    description: 'Free caller data, as sent',
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: { cartId: 'c-981' },
  })
  metadata!: Record<string, unknown> | null;

  @ApiProperty({ description: 'BYRD200 on creation', enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code!: ReturnCode;

  @ApiProperty({ description: 'Text of `code`', example: 'Operation successfully completed' })
  description!: string;
}

@ApiSchema({ name: 'OrderTransaction', description: 'A transaction of an order.' })
export class OrderTransactionSchema implements OrderTransaction {
  @ApiProperty({ description: 'Transaction GUID', example: EXAMPLE_IDS.transaction })
  id!: string;

  @ApiProperty({ description: 'The same GUID as `id`', example: EXAMPLE_IDS.transaction })
  transactionId!: string;

  @ApiProperty({ enum: TRANSACTION_STATUSES, example: 'Success' })
  status!: TransactionStatus;

  @ApiProperty({ enum: OPERATION_TYPES, example: 'Payment' })
  operationType!: OperationType;

  @ApiProperty({ description: 'Decimal amount', example: '25.00' })
  amount!: string;

  @ApiProperty({ description: 'Minor units', example: 2500 })
  isoAmount!: number;

  @ApiProperty({ enum: PAYMENT_METHODS, nullable: true, example: 'card' })
  paymentMethod!: PaymentMethod | null;

  @ApiProperty({ description: 'Creation time, ISO 8601 UTC', format: 'date-time', example: EXAMPLE_TIME })
  createdAt!: string;
}

@ApiSchema({
  name: 'OrderDetailsResponse',
  description: 'An order with its transactions (`GET /api/v2/orders/{orderId}` → 200).',
})
export class OrderDetailsResponseSchema extends OrderResponseSchema implements OrderDetailsResponse {
  @ApiProperty({
    description: 'The payment that moved the order to its status, null before any',
    type: String,
    nullable: true,
    example: EXAMPLE_IDS.transaction,
  })
  paymentId!: string | null;

  @ApiProperty({
    description: 'Transactions of the order, oldest first',
    type: () => [OrderTransactionSchema],
  })
  transactions!: OrderTransaction[];

  @ApiProperty({
    description: 'Latest transaction, null before any payment',
    type: String,
    nullable: true,
    example: EXAMPLE_IDS.transaction,
  })
  lastTransactionId!: string | null;

  @ApiProperty({ description: 'Decimal amount refunded so far ("0.00" when none)', example: '0.00' })
  refundedAmount!: string;

  @ApiProperty({ description: 'Minor units refunded so far', example: 0 })
  isoRefundedAmount!: number;

  @ApiProperty({
    description: 'When the order was canceled, ISO 8601 UTC',
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
  })
  canceledAt!: string | null;
}

@ApiSchema({
  name: 'CheckoutOriginsResponse',
  description: "The merchant's checkout origins (`GET` / `PUT /api/v2/checkout-origins` → 200).",
})
export class CheckoutOriginsResponseSchema implements CheckoutOriginsResponse {
  @ApiProperty({
    description: 'Normalised https origins',
    type: [String],
    example: ['https://shop.example.com'],
  })
  origins!: string[];
}
