import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { PaymentsCoreModule } from '../payments-core/payments-core.module.js';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { SandboxAcquirer } from '../acquirer/sandbox-acquirer.js';
import { MeasuredAcquirer } from '../acquirer/measured-acquirer.js';
import { PaymentsMetrics } from '../metrics/payments-metrics.js';
import { THREE_DS_PROVIDER, type ThreeDSProvider } from '../three-ds-server/three-ds-provider.js';
import { SandboxThreeDSProvider } from '../three-ds-server/sandbox-three-ds.provider.js';
import { MeasuredThreeDSProvider } from '../three-ds-server/measured-three-ds.provider.js';
import { PaymentsController } from './payments.controller.js';
import { CheckoutBrowserAccessMiddleware } from './checkout-browser-access.middleware.js';
import { CreatePayment } from './create-payment.usecase.js';
import { CardCharge } from './card-charge.js';
import { PayPayment } from './pay-payment.usecase.js';
import { EndUnpaidPayments } from './end-unpaid-payments.sweep.js';
import { SaveCardsLeftBehind } from './save-cards-left-behind.sweep.js';
import { PaymentAuthorizer } from './payment-authorizer.js';
import { CardSaver } from './card-saver.js';
import { AcquirerOutcomeRecorder } from '../transactions/acquirer-outcome.recorder.js';
import { TokenCharge } from './token-charge.js';
import { VerifiedCards } from './verified-cards.js';
import { TransactionsController } from '../transactions/transactions.controller.js';
import { QueryTransactions } from '../transactions/query-transactions.usecase.js';
import { AsyncPaymentsModule } from '../async/async-payments.module.js';

/** Card payments, their 3DS authentication and the transaction reads. */
@Module({
  imports: [PaymentsCoreModule, AsyncPaymentsModule], // POST /api/v2/payment hands multibanco and mbway over to it
  controllers: [PaymentsController, TransactionsController],
  providers: [
    // ACQUIRER and THREE_DS_PROVIDER (config) choose among the implementations that ship: each table
    // below lists them by name and must name every value the config accepts (the compiler checks).
    // Whichever is chosen is measured (calls, outcomes, latency on GET /metrics).
    PaymentsMetrics,
    SandboxAcquirer,
    SandboxThreeDSProvider,
    {
      provide: ACQUIRER,
      useFactory: (config: PaymentsConfig, metrics: PaymentsMetrics, sandbox: SandboxAcquirer) => {
        const acquirers: Record<PaymentsConfig['ACQUIRER'], Acquirer> = { sandbox };
        return new MeasuredAcquirer(acquirers[config.ACQUIRER], metrics);
      },
      inject: [PAYMENTS_CONFIG, PaymentsMetrics, SandboxAcquirer],
    },
    {
      provide: THREE_DS_PROVIDER,
      useFactory: (config: PaymentsConfig, metrics: PaymentsMetrics, sandbox: SandboxThreeDSProvider) => {
        const servers: Record<PaymentsConfig['THREE_DS_PROVIDER'], ThreeDSProvider> = { sandbox };
        return new MeasuredThreeDSProvider(servers[config.THREE_DS_PROVIDER], metrics);
      },
      inject: [PAYMENTS_CONFIG, PaymentsMetrics, SandboxThreeDSProvider],
    },
    PaymentAuthorizer,
    AcquirerOutcomeRecorder,
    CardSaver,
    CardCharge,
    TokenCharge,
    VerifiedCards,
    CreatePayment,
    PayPayment,
    EndUnpaidPayments,
    SaveCardsLeftBehind,
    QueryTransactions,
  ],
  exports: [
    PaymentsCoreModule,
    ACQUIRER,
    THREE_DS_PROVIDER,
    PaymentAuthorizer,
    AcquirerOutcomeRecorder,
    CardCharge,
    CreatePayment,
    VerifiedCards,
  ],
})
export class PaymentsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // The routes a browser may call with ?checkoutKey= (the middleware acts on those requests only).
    consumer
      .apply(CheckoutBrowserAccessMiddleware)
      .forRoutes(
        { path: 'api/v2/payment', method: RequestMethod.ALL },
        { path: 'api/v2/payment/:transactionId/pay', method: RequestMethod.ALL },
      );
  }
}
