import { Module } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module.js';
import { VerificationRpcHandlers } from './verification.rpc.js';
import { TokenVerificationsQuery } from './token-verifications.usecase.js';
import { VerifyCard } from './verify-card.usecase.js';

/** The vault's card verifications (rpc.payments.verifyCard): a 3DS authentication of the card, no charge. */
@Module({
  imports: [PaymentsModule],
  providers: [VerifyCard, TokenVerificationsQuery, VerificationRpcHandlers],
})
export class VerificationModule {}
