import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConfigError } from '@byrd/platform';
import { CardCipher } from './card-cipher.js';
import { describeTokensByKek, tokensByKek } from './kek-usage.js';

/**
 * The vault refuses to start when stored tokens are wrapped by a KEK that VAULT_KEKS does not list:
 * it would answer those tokens as valid and fail every payment with them (500). Refusing at start,
 * not in readiness, is what stops a rolling deploy that drops a key too early: the new pods crash
 * with this message and the old ones, which still have the key, keep serving.
 */
@Injectable()
export class KekCheck implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cipher: CardCipher,
  ) {}

  async onModuleInit(): Promise<void> {
    const missing = await tokensByKek(this.dataSource, this.cipher.kekIds).catch(
      (error: { code?: string }) => {
        if (error.code === '42P01') return new Map<string, number>(); // not migrated yet: nothing stored
        throw error;
      },
    );
    if (missing.size === 0) return;
    throw new ConfigError(
      `Cannot start: VAULT_KEKS does not list the key-encryption keys that stored card tokens are ` +
        `wrapped by (${describeTokensByKek(missing)}); those tokens could not be charged. Put the keys ` +
        `back in VAULT_KEKS. A key is retired only after \`vault rotate-kek\` reports nothing left ` +
        `under it (docs/operations.md, "The vault's keys").`,
    );
  }
}
