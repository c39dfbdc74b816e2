import { Injectable, Logger } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import type { Transaction } from '../transactions/transaction.entity.js';

/**
 * Tells the vault a token's 3DS verification succeeded, so a card a re-tokenization staged under it
 * (a renewed expiry) becomes the token's: until then the vault keeps the token's card as it was.
 */
@Injectable()
export class VerifiedCards {
  private readonly logger = new Logger(VerifiedCards.name);

  constructor(private readonly rpc: Rpc) {}

  /** Once a verification ended. Best effort: a payment of the token asks again (TokenCharge). */
  async ended(verification: Transaction): Promise<void> {
    const { operationType, status, tokenId } = verification;
    if (operationType !== 'Verification' || status !== 'Success' || !tokenId) return;
    try {
      await this.promote(verification.merchantId, tokenId, verification.id);
    } catch (error) {
      this.logger.warn(`Verified card of token ${tokenId} not passed on yet: ${String(error)}`);
    }
  }

  promote(merchantId: string, tokenId: string, verificationId: string): Promise<unknown> {
    return this.rpc.call(RpcSubjects.TokensVerified, { merchantId, tokenId, verificationId });
  }
}
