import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import type { TokenVerifications, TokenVerificationsRequest } from '@byrd/contracts';
import { Transaction } from '../transactions/transaction.entity.js';

/** More token ids than one vault sweep batch asks about is not a request the vault makes. */
const MAX_TOKENS = 500;

/**
 * `rpc.payments.tokenVerifications` (the vault only): every succeeded 3DS verification of the
 * merchant's tokens. The vault hears of each as it ends (`rpc.tokens.verified`), but best effort:
 * before it forgets a card it never heard was verified, it asks here, where the outcome is recorded.
 */
@Injectable()
export class TokenVerificationsQuery {
  constructor(private readonly dataSource: DataSource) {}

  async execute({ merchantId, tokenIds }: TokenVerificationsRequest): Promise<TokenVerifications> {
    if (tokenIds.length === 0) return { succeeded: [] };
    if (tokenIds.length > MAX_TOKENS) throw new Error(`At most ${MAX_TOKENS} tokens per request`);
    // transactions_token_verified_idx (migration 1765100000100).
    const passed = await this.dataSource.getRepository(Transaction).find({
      select: { id: true, tokenId: true },
      where: { merchantId, tokenId: In(tokenIds), operationType: 'Verification', status: 'Success' },
    });
    return { succeeded: passed.map((t) => ({ tokenId: t.tokenId!, verificationId: t.id })) };
  }
}
