import { Module } from '@nestjs/common';
import { CheckoutOrdersModule } from '../orders/checkout-orders.module.js';
import { CheckoutPaymentsController } from './checkout-payments.controller.js';
import { GetCheckoutPayment } from './get-payment.usecase.js';
import { PayCheckoutOrder } from './pay-order.usecase.js';

@Module({
  imports: [CheckoutOrdersModule],
  controllers: [CheckoutPaymentsController],
  providers: [PayCheckoutOrder, GetCheckoutPayment],
})
export class CheckoutPaymentsModule {}
