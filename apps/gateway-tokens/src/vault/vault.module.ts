import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { TokensConfig } from '../config.js';
import { CardCipher, CardFingerprint } from './card-cipher.js';
import { KekCheck } from './kek-check.js';
import { KeyRing } from './key-ring.js';
import { VaultMetrics } from './vault-metrics.js';

/**
 * The vault's cryptography, built once from the configured keys (checked at start against the KEKs
 * the stored tokens need), and its metrics.
 */
@Global()
@Module({})
export class VaultModule {
  static forRoot(config: TokensConfig): DynamicModule {
    return {
      module: VaultModule,
      providers: [
        VaultMetrics,
        KekCheck,
        { provide: CardCipher, useValue: new CardCipher(KeyRing.fromConfig(config)) },
        {
          provide: CardFingerprint,
          useValue: new CardFingerprint(Buffer.from(config.VAULT_FINGERPRINT_KEY, 'base64')),
        },
      ],
      exports: [CardCipher, CardFingerprint, VaultMetrics],
    };
  }
}
