import { Module } from '@nestjs/common';
import { CancelCheckoutOrder } from './cancel-order.usecase.js';
import { CheckoutOrdersController } from './checkout-orders.controller.js';
import { GetCheckoutOrder } from './get-checkout-order.usecase.js';

@Module({
  controllers: [CheckoutOrdersController],
  providers: [GetCheckoutOrder, CancelCheckoutOrder],
  exports: [GetCheckoutOrder],
})
export class CheckoutOrdersModule {}
