import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { SaveAuthenticatedCard } from './create-token.usecase.js';
import { Detokenize, PromoteVerifiedCard } from './token-queries.usecases.js';

/** The vault's authenticated subjects (callers listed in RPC_CALLERS). */
@Injectable()
export class TokensRpcHandlers implements OnModuleInit {
  constructor(
    private readonly rpc: Rpc,
    private readonly saveCard: SaveAuthenticatedCard,
    private readonly detokenize: Detokenize,
    private readonly promote: PromoteVerifiedCard,
  ) {}

  onModuleInit(): void {
    this.rpc.serve(RpcSubjects.TokensCreate, (request) => this.saveCard.execute(request));
    this.rpc.serve(RpcSubjects.TokensDetokenize, (request) => this.detokenize.execute(request));
    this.rpc.serve(RpcSubjects.TokensVerified, (request) => this.promote.execute(request));
  }
}
