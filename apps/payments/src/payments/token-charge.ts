import { Injectable } from '@nestjs/common';
import { RpcSubjects, type DetokenizedCard, type RequestTransactionMode } from '@byrd/contracts';
import { Refusal, Rpc } from '@byrd/platform';
import type { Transaction } from '../transactions/transaction.entity.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';
import { CardCharge, type ChargeStarted } from './card-charge.js';
import { VerifiedCards } from './verified-cards.js';

/** No cardholder is present in these modes, so there is nobody to authenticate. */
const MERCHANT_INITIATED: readonly RequestTransactionMode[] = [
  'merchantInitiatedUnescheduled',
  'merchantInitiatedRecurring',
];

/**
 * Charges a stored card: the vault hands over the card (authenticated RPC), and the token must be
 * unexpired (BYRD240) and verified. Merchant-initiated modes skip 3DS; the others authenticate the
 * shopper by the sandbox 3DS rules, as a card payment does.
 */
@Injectable()
export class TokenCharge {
  constructor(
    private readonly transactions: TransactionRepository,
    private readonly rpc: Rpc,
    private readonly charge: CardCharge,
    private readonly verifiedCards: VerifiedCards,
  ) {}

  async start(
    transaction: Transaction,
    tokenId: string,
    mode: RequestTransactionMode = 'cardHolderInitiatedUnescheduled',
    now = new Date(),
  ): Promise<ChargeStarted> {
    const card = await this.detokenize(transaction.merchantId, tokenId);
    if (card.isExpired) {
      throw Refusal.cardExpired(`Token ${tokenId} is expired (${card.expiration})`);
    }
    if (card.verificationId) await this.assertVerified(transaction.merchantId, tokenId, card.verificationId);
    Object.assign(transaction, { tokenId, transactionMode: mode });
    const input = { number: card.number, expiration: card.expiration, holder: card.holder };
    return MERCHANT_INITIATED.includes(mode)
      ? this.charge.chargeWithoutShopper(transaction, input, now)
      : this.charge.start(transaction, input, now);
  }

  /**
   * The token's card; a card a re-tokenization staged whose verification succeeded is taken into
   * the token first (the vault may not have heard of it: its verification's end asked best effort).
   */
  private async detokenize(merchantId: string, tokenId: string): Promise<DetokenizedCard> {
    const card = await this.rpc.call(RpcSubjects.TokensDetokenize, { merchantId, tokenId });
    if (!card.stagedVerificationId) return card;
    const staged = await this.transactions.verification(card.stagedVerificationId);
    if (staged?.status !== 'Success') return card;
    await this.verifiedCards.promote(merchantId, tokenId, staged.id);
    return this.rpc.call(RpcSubjects.TokensDetokenize, { merchantId, tokenId });
  }

  /**
   * A 3DS verification of the token must have succeeded: its shopper may never have finished it.
   * Any of them: the vault names the last one started (`verificationId`, read only to say why not),
   * and one a concurrent tokenization of the same card started, and its shopper passed, proves the
   * cardholder all the same.
   */
  private async assertVerified(merchantId: string, tokenId: string, verificationId: string): Promise<void> {
    if (await this.transactions.tokenVerified(merchantId, tokenId)) return;
    const verification = await this.transactions.verification(verificationId);
    const why =
      verification?.status === 'Created'
        ? 'its cardholder has not completed the 3D Secure verification yet'
        : 'its 3D Secure verification failed; tokenize the card again';
    throw Refusal.notAllowed(`Token ${tokenId} cannot be charged: ${why}`);
  }
}
