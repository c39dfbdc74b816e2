import { Module } from '@nestjs/common';
import { CardStore } from './card-store.js';
import { CreateToken, SaveAuthenticatedCard } from './create-token.usecase.js';
import { ForgetUnverifiedCards } from './forget-unverified-cards.sweep.js';
import { DeleteToken, Detokenize, GetToken, ListTokens, PromoteVerifiedCard } from './token-queries.usecases.js';
import { TokensController } from './tokens.controller.js';
import { TokensRpcHandlers } from './tokens.rpc.js';

@Module({
  controllers: [TokensController],
  providers: [
    CardStore,
    CreateToken,
    SaveAuthenticatedCard,
    GetToken,
    ListTokens,
    DeleteToken,
    Detokenize,
    PromoteVerifiedCard,
    ForgetUnverifiedCards,
    TokensRpcHandlers,
  ],
})
export class TokensModule {}
