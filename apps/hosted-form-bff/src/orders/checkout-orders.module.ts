import { Module } from '@nestjs/common';
import { RequestCheckoutCancel } from './request-checkout-cancel.usecase.js';
import { CheckoutOrdersController } from './checkout-orders.controller.js';
import { GetCheckoutOrderView } from './get-checkout-order-view.usecase.js';

@Module({
  controllers: [CheckoutOrdersController],
  providers: [GetCheckoutOrderView, RequestCheckoutCancel],
  exports: [GetCheckoutOrderView],
})
export class CheckoutOrdersModule {}
