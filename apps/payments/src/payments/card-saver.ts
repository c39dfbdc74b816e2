import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RpcSubjects } from '@byrd/contracts';
import { ApiError, Rpc } from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';

/**
 * The hosted form's "save my card": once a card payment whose shopper asked for it has succeeded
 * (at once, or after the 3DS challenge), the vault stores the card (`rpc.tokens.create`, callable
 * by payments only) as an `initialUnescheduled` credential of the order's customer reference. The
 * shopper authenticated while paying, so the token needs no verification of its own.
 */
@Injectable()
export class CardSaver {
  private readonly logger = new Logger(CardSaver.name);

  constructor(
    private readonly rpc: Rpc,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Saves the card when the payment asked for it and succeeded (its outcome already committed: the
   * vault is called outside our records, never before them); records the token on the transaction. The payment stands whatever the vault answers: a failure is logged (never with
   * card data) and leaves `savedTokenId` null.
   */
  async saveIfAsked(transaction: Transaction, card: { number: string; expiration: string }): Promise<void> {
    if (!transaction.saveCardReference || transaction.savedTokenId || transaction.status !== 'Success')
      return;
    try {
      const token = await this.rpc.call(RpcSubjects.TokensCreate, {
        merchantId: transaction.merchantId,
        customReference: transaction.saveCardReference,
        alias: null,
        card: { number: card.number, expiration: card.expiration, holder: transaction.holder },
        transactionMode: 'initialUnescheduled',
      });
      transaction.savedTokenId = token.tokenId;
      await this.dataSource
        .getRepository(Transaction)
        .update({ id: transaction.id }, { savedTokenId: token.tokenId });
    } catch (error) {
      // The vault's own messages name fields, never their values; anything else is reduced to its type.
      const why = error instanceof ApiError ? `${error.code} ${error.message}` : (error as Error)?.name;
      this.logger.warn(`Payment ${transaction.id} succeeded but its card was not saved: ${why}`);
    }
  }
}
