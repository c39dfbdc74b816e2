import { Module } from '@nestjs/common';
import { PaymentsCoreModule } from './payments-core.module.js';
import { ACQUIRER } from './acquirer/acquirer.js';
import { SandboxAcquirer } from './acquirer/sandbox-acquirer.js';
import { MeasuredAcquirer } from './acquirer/measured-acquirer.js';
import { PaymentsMetrics } from './metrics/payments-metrics.js';
import { THREE_DS_PROVIDER } from './three-ds/three-ds-provider.js';
import { SandboxThreeDSProvider } from './three-ds/sandbox-three-ds.provider.js';
import { MeasuredThreeDSProvider } from './three-ds/measured-three-ds.provider.js';
import { CompleteAuthentication } from './three-ds/complete-authentication.usecase.js';
import { PaymentsController } from './payments/payments.controller.js';
import { CreatePayment } from './payments/create-payment.usecase.js';
import { CardCharge } from './payments/card-charge.js';
import { PayPayment } from './payments/pay-payment.usecase.js';
import { PaymentAuthorizer } from './payments/payment-authorizer.js';
import { CardSaver } from './payments/card-saver.js';
import { AcquirerOutcomeRecorder } from './transactions/acquirer-outcome.recorder.js';
import { TokenCharge } from './payments/token-charge.js';
import { VerifyCard } from './verification/verify-card.usecase.js';
import { VerificationRpcHandlers } from './verification/verification.rpc.js';
import { TransactionsController } from './transactions/transactions.controller.js';
import { QueryTransactions } from './transactions/query-transactions.usecase.js';
import { AsyncPaymentsModule } from './async/async-payments.module.js';

/** Card payments, their 3DS authentication and the transaction reads. */
@Module({
  imports: [PaymentsCoreModule, AsyncPaymentsModule], // POST /api/v2/payment hands multibanco and mbway over to it
  controllers: [PaymentsController, TransactionsController],
  providers: [
    // The sandbox is the only acquirer and 3DS server shipped; ACQUIRER / THREE_DS_PROVIDER pick them.
    // Whichever is wired is measured (calls, outcomes, latency on GET /metrics).
    PaymentsMetrics,
    SandboxAcquirer,
    SandboxThreeDSProvider,
    {
      provide: ACQUIRER,
      useFactory: (acquirer: SandboxAcquirer, metrics: PaymentsMetrics) =>
        new MeasuredAcquirer(acquirer, metrics),
      inject: [SandboxAcquirer, PaymentsMetrics],
    },
    {
      provide: THREE_DS_PROVIDER,
      useFactory: (provider: SandboxThreeDSProvider, metrics: PaymentsMetrics) =>
        new MeasuredThreeDSProvider(provider, metrics),
      inject: [SandboxThreeDSProvider, PaymentsMetrics],
    },
    PaymentAuthorizer,
    AcquirerOutcomeRecorder,
    CardSaver,
    CardCharge,
    TokenCharge,
    CreatePayment,
    PayPayment,
    CompleteAuthentication,
    QueryTransactions,
    // The vault's card verifications run on the same 3DS server.
    VerifyCard,
    VerificationRpcHandlers,
  ],
  exports: [
    PaymentsCoreModule,
    ACQUIRER,
    THREE_DS_PROVIDER,
    PaymentAuthorizer,
    AcquirerOutcomeRecorder,
    CompleteAuthentication,
    CreatePayment,
  ],
})
export class PaymentsModule {}
