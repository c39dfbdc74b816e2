import { Module } from '@nestjs/common';
import { AsyncPaymentsModule } from '../async/async-payments.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { CheckoutRpcHandlers } from './checkout.rpc.js';
import { GetCheckoutPayment } from './get-checkout-payment.usecase.js';
import { PayCheckoutOrder } from './pay-checkout-order.usecase.js';

/** Payments of the hosted form, asked for over NATS by its backend (hosted-form-bff). */
@Module({
  imports: [PaymentsModule, AsyncPaymentsModule],
  providers: [PayCheckoutOrder, GetCheckoutPayment, CheckoutRpcHandlers],
})
export class CheckoutModule {}
