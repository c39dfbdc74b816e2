import { Module } from '@nestjs/common';
import { CheckoutOriginsController } from './checkout-origins.controller.js';
import { GetCheckoutOrigins, SetCheckoutOrigins } from './checkout-origins.usecases.js';

@Module({
  controllers: [CheckoutOriginsController],
  providers: [GetCheckoutOrigins, SetCheckoutOrigins],
})
export class CheckoutOriginsModule {}
