import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import {
  CARD_BRANDS,
  MERCHANT_MODES,
  ORDER_STATUSES,
  PAYMENT_METHODS,
  PAYMENT_TYPES,
  THREE_DS_STATUSES,
  TRANSACTION_STATUSES,
  type CardBrand,
  type MerchantMode,
  type OrderStatus,
  type PaymentMethod,
  type PaymentType,
  type ThreeDSecureStatus,
  type TransactionStatus,
} from '../enums.js';
import type {
  CheckoutCancelResult,
  CheckoutOrderView,
  CheckoutPaymentView,
  CheckoutSavedCard,
} from '../dto/checkout.dto.js';
import type { MbWayDetails, MultibancoReference } from '../dto/payments.dto.js';
import { EXAMPLE_IDS, EXAMPLE_TIME } from './common.response.js';
import { MbWayDetailsSchema, MultibancoReferenceSchema } from './payments.response.js';

@ApiSchema({ name: 'CheckoutOrderView', description: 'The order the hosted form renders.' })
export class CheckoutOrderViewSchema implements CheckoutOrderView {
  @ApiProperty({ example: EXAMPLE_IDS.order })
  orderId!: string;
  @ApiProperty({ enum: ORDER_STATUSES, example: 'created' })
  status!: OrderStatus;
  @ApiProperty({ example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 2500 })
  isoAmount!: number;
  @ApiProperty({ example: 'EUR' })
  currency!: string;
  @ApiProperty({ type: String, nullable: true, example: 'ORDER-1042' })
  orderRef!: string | null;
  @ApiProperty({ example: 'Acme Shop' })
  merchantName!: string;
  @ApiProperty({
    description: '`sandbox` orders show a test-mode banner',
    enum: MERCHANT_MODES,
    example: 'sandbox',
  })
  merchantMode!: MerchantMode;
  @ApiProperty({ format: 'date-time', example: EXAMPLE_TIME })
  expiresAt!: string;
  @ApiProperty({ type: String, nullable: true, example: 'https://shop.example.com/return' })
  redirectUrl!: string | null;
  @ApiProperty({ type: [String], example: ['https://shop.example.com'] })
  allowedOrigins!: string[];
  @ApiProperty({ enum: PAYMENT_METHODS, isArray: true, example: ['card', 'mbway'] })
  paymentMethods!: PaymentMethod[];
  @ApiProperty({ example: false })
  saveCardOffered!: boolean;
  @ApiProperty({ example: false })
  isPreAuth!: boolean;
  @ApiProperty({
    description: 'A payment attempt holds the order: the form shows it in progress',
    example: false,
  })
  paymentLocked!: boolean;
  @ApiProperty({
    description:
      'A successful pre-authorisation holds the order until the merchant captures or releases it: the form shows the payment authorised',
    example: false,
  })
  authorized!: boolean;
  @ApiProperty({ example: 'https://gateway.example.com/3ds/sdk.js' })
  threeDSecureSdkUrl!: string;
}

@ApiSchema({ name: 'CheckoutThreeDSecure', description: 'Hand `id` and `requestId` to the 3DS SDK.' })
export class CheckoutThreeDSecureSchema {
  @ApiProperty({ example: EXAMPLE_IDS.threeDSecure })
  id!: string;
  @ApiProperty({ enum: THREE_DS_STATUSES, example: 'Created' })
  status!: ThreeDSecureStatus;
  @ApiProperty({ example: EXAMPLE_IDS.request })
  requestId!: string;
}

@ApiSchema({ name: 'CheckoutSavedCard', description: 'A card saved by a hosted-form payment.' })
export class CheckoutSavedCardSchema implements CheckoutSavedCard {
  @ApiProperty({ example: EXAMPLE_IDS.token })
  tokenId!: string;
  @ApiProperty({ example: '424242******4242' })
  maskedCardNumber!: string;
  @ApiProperty({ enum: CARD_BRANDS, nullable: true, example: 'VISA' })
  brand!: CardBrand | null;
}

@ApiSchema({ name: 'CheckoutPaymentView', description: 'A payment as the hosted form follows it.' })
export class CheckoutPaymentViewSchema implements CheckoutPaymentView {
  @ApiProperty({ example: EXAMPLE_IDS.transaction })
  transactionId!: string;
  @ApiProperty({ enum: PAYMENT_TYPES, example: 'card' })
  type!: PaymentType;
  @ApiProperty({ enum: TRANSACTION_STATUSES, example: 'Success' })
  status!: TransactionStatus;
  @ApiProperty({ enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code!: ReturnCode;
  @ApiProperty({ example: 'Operation successfully completed' })
  description!: string;
  @ApiProperty({ example: '25.00' })
  amount!: string;
  @ApiProperty({ example: 'EUR' })
  currency!: string;
  @ApiProperty({ enum: CARD_BRANDS, nullable: true, example: 'VISA' })
  brand!: CardBrand | null;
  @ApiProperty({ type: () => CheckoutThreeDSecureSchema, nullable: true })
  threeDSecure!: CheckoutThreeDSecureSchema | null;
  @ApiProperty({
    description:
      'The order refused this attempt before the card reached the bank (another payment of the order was in progress, or the order was paid or closed meanwhile): Denied, BYRD205, but not a decline',
    example: false,
  })
  refusedByOrder!: boolean;
  @ApiProperty({ type: () => MultibancoReferenceSchema, nullable: true })
  multibanco!: MultibancoReference | null;
  @ApiProperty({ type: () => MbWayDetailsSchema, nullable: true })
  mbway!: MbWayDetails | null;
  @ApiProperty({ type: () => CheckoutSavedCardSchema, nullable: true })
  savedCard!: CheckoutSavedCard | null;
}

@ApiSchema({ name: 'CheckoutCancelResult', description: "The shopper's cancel: the order's new status." })
export class CheckoutCancelResultSchema implements CheckoutCancelResult {
  @ApiProperty({ example: EXAMPLE_IDS.order })
  orderId!: string;
  @ApiProperty({ enum: ORDER_STATUSES, example: 'canceled' })
  status!: OrderStatus;
}
