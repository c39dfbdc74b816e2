import { Module, type DynamicModule } from '@nestjs/common';
import { PlatformModule } from '@byrd/platform';
import { TOKENS_CONFIG, type TokensConfig } from './config.js';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from './database.js';
import { TokensModule } from './tokens/tokens.module.js';
import { VaultModule } from './vault/vault.module.js';

export const SERVICE_NAME = 'gateway-tokens';

@Module({})
export class AppModule {
  static forRoot(config: TokensConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({
          serviceName: SERVICE_NAME,
          config,
          entities: TOKENS_ENTITIES,
          migrations: TOKENS_MIGRATIONS,
          configToken: TOKENS_CONFIG,
        }),
        VaultModule.forRoot(config),
        TokensModule,
      ],
    };
  }
}
