import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { VerifyCard } from './verify-card.usecase.js';

/** `rpc.payments.verifyCard`, callable by the vault only (RPC_CALLERS). */
@Injectable()
export class VerificationRpcHandlers implements OnModuleInit {
  constructor(
    private readonly rpc: Rpc,
    private readonly verifyCard: VerifyCard,
  ) {}

  onModuleInit(): void {
    this.rpc.serve(RpcSubjects.PaymentsVerifyCard, (request) => this.verifyCard.execute(request));
  }
}
