import { Module } from '@nestjs/common';
import { CardStore } from './card-store.js';
import { CreateToken, SaveAuthenticatedCard } from './create-token.usecase.js';
import { DeleteToken, Detokenize, GetToken, ListTokens } from './token-queries.usecases.js';
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
    TokensRpcHandlers,
  ],
})
export class TokensModule {}
