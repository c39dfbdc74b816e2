import { Module } from '@nestjs/common';
import { PaymentsCoreModule } from '../payments-core/payments-core.module.js';
import { ASYNC_PAYMENT_PROVIDER } from './async-payment-provider.js';
import { CreateAsyncPayment } from './create-async-payment.usecase.js';
import { SandboxAsyncPaymentProvider } from './sandbox-async-provider.js';
import { SettleAsyncPayment } from './settle-async-payment.usecase.js';
import { OpenAttempts } from './open-attempts.js';
import { OrderCanceledConsumer } from './order-canceled.consumer.js';
import { EndLapsedAttempts } from './end-lapsed-attempts.sweep.js';

/** Multibanco and MB WAY payments. PaymentsModule imports it so `POST /api/v2/payment` can hand async types over. */
@Module({
  imports: [PaymentsCoreModule],
  providers: [
    // The sandbox is the only async processor shipped; a real one (SIBS, a PSP) replaces it here.
    { provide: ASYNC_PAYMENT_PROVIDER, useClass: SandboxAsyncPaymentProvider },
    CreateAsyncPayment,
    SettleAsyncPayment,
    OpenAttempts,
    OrderCanceledConsumer,
    EndLapsedAttempts,
  ],
  exports: [CreateAsyncPayment, SettleAsyncPayment, OpenAttempts],
})
export class AsyncPaymentsModule {}
