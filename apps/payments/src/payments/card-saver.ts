import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RpcSubjects } from '@byrd/contracts';
import { ApiError, Rpc } from '@byrd/platform';
import type { Transaction } from '../transactions/transaction.entity.js';

/** A card number and expiry, as the vault stores it. */
export interface CardToSave {
  number: string;
  expiration: string;
}

/**
 * The hosted form's "save my card": once a card payment whose shopper asked for it has succeeded
 * (at once, after the 3DS challenge, or settled later by the recovery), the vault stores the card
 * (`rpc.tokens.create`, callable by payments only) as an `initialUnescheduled` credential of the
 * order's customer reference. The shopper authenticated while paying, so the token needs no
 * verification of its own.
 *
 * Until the vault has it, the card stays sealed on the payment's 3DS session (CARD_SEAL_KEY), so an
 * acquirer answer lost to a timeout, a vault away or a crash after the outcome's commit only delays
 * the save: SaveCardsLeftBehind finishes it. The vault keeps one token per card and customer
 * reference, so a save repeated by a sweep or another replica stores nothing twice.
 */
@Injectable()
export class CardSaver {
  private readonly logger = new Logger(CardSaver.name);

  constructor(
    private readonly rpc: Rpc,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * After an authorisation's outcome is committed: saves the card of a successful payment whose
   * shopper asked for it, and forgets the sealed card of one that ended without money, or of any
   * challenge's payment once it ended (`sealedOnSession`: kept only for the recovery). One still
   * waiting for the acquirer (the recovery settles it, and may have to send the card) keeps it. The
   * payment stands whatever the vault answers.
   */
  async afterOutcome(
    transaction: Transaction,
    { card, sealedOnSession }: { card: CardToSave; sealedOnSession?: boolean },
  ): Promise<void> {
    if (transaction.saveCardReference && !transaction.savedTokenId) {
      if (transaction.status === 'Success') await this.save(transaction, card);
      else if (!transaction.acquirerPendingSince) await this.forget(transaction.id);
    } else if (sealedOnSession && !transaction.acquirerPendingSince) await this.forget(transaction.id);
  }

  /**
   * Stores the card of a successful payment in the vault, then records the token on the transaction
   * and wipes the sealed card in one statement. Returns whether it was saved; a vault failure is
   * logged (never with card data) and leaves the sealed card for the next try.
   */
  async save(transaction: Transaction, card: CardToSave): Promise<boolean> {
    try {
      const token = await this.rpc.call(RpcSubjects.TokensCreate, {
        merchantId: transaction.merchantId,
        customReference: transaction.saveCardReference!,
        alias: null,
        card: { number: card.number, expiration: card.expiration, holder: transaction.holder },
        transactionMode: 'initialUnescheduled',
        paidAt: transaction.createdAt.toISOString(),
      });
      await this.dataSource.query(
        `WITH saved AS (UPDATE transactions SET saved_token_id = $2 WHERE id = $1)
         UPDATE three_ds_sessions SET sealed_card = NULL WHERE transaction_id = $1`,
        [transaction.id, token.tokenId],
      );
      transaction.savedTokenId = token.tokenId;
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'BYRD901') {
        // Deleted by its merchant since this payment (its shopper's wish): never saved, so wiped.
        this.logger.log(`Payment ${transaction.id}: its card was deleted since, so it is not saved`);
        await this.forget(transaction.id);
        return false;
      }
      // The vault's own messages name fields, never their values; anything else is reduced to its type.
      const why = error instanceof ApiError ? `${error.code} ${error.message}` : (error as Error)?.name;
      this.logger.warn(`Payment ${transaction.id} succeeded but its card is not saved yet: ${why}`);
      return false;
    }
  }

  /** Wipes the card sealed for a payment (its save, or its recovery): it will not be needed. */
  async forget(transactionId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE three_ds_sessions SET sealed_card = NULL WHERE transaction_id = $1 AND sealed_card IS NOT NULL`,
      [transactionId],
    );
  }
}
