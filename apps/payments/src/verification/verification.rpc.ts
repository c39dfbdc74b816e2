import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { TokenVerificationsQuery } from './token-verifications.usecase.js';
import { VerifyCard } from './verify-card.usecase.js';

/** `rpc.payments.verifyCard` and `rpc.payments.tokenVerifications`, callable by the vault only (RPC_CALLERS). */
@Injectable()
export class VerificationRpcHandlers implements OnModuleInit {
  constructor(
    private readonly rpc: Rpc,
    private readonly verifyCard: VerifyCard,
    private readonly tokenVerifications: TokenVerificationsQuery,
  ) {}

  onModuleInit(): void {
    this.rpc.serve(RpcSubjects.PaymentsVerifyCard, (request) => this.verifyCard.execute(request));
    this.rpc.serve(RpcSubjects.PaymentsTokenVerifications, (request) =>
      this.tokenVerifications.execute(request),
    );
  }
}
