import { Module } from '@nestjs/common';
import { AsyncPaymentsModule } from '../async/async-payments.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { CheckoutRpcHandlers } from './checkout.rpc.js';
import { GetPaymentWithCheckoutKey } from './get-payment-with-checkout-key.usecase.js';
import { PayOrderWithCheckoutKey } from './pay-order-with-checkout-key.usecase.js';

/** Payments of the hosted form, asked for over NATS by its backend (hosted-form-bff). */
@Module({
  imports: [PaymentsModule, AsyncPaymentsModule],
  providers: [PayOrderWithCheckoutKey, GetPaymentWithCheckoutKey, CheckoutRpcHandlers],
})
export class CheckoutModule {}
