import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicSweep } from '@byrd/platform';
import { CardSeal } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';
import { CardSaver } from './card-saver.js';

const BATCH_SIZE = 50;
/** The request that took the payment saves its card itself; a sweep steps in only after this. */
const REQUEST_GRACE_MS = 30_000;
/** How long a card waits sealed for its payment's outcome and the vault before it is given up. */
export const KEEP_SEALED_MS = 60 * 60_000;

interface SealedCardRow {
  sessionId: string;
  transactionId: string;
  sealedCard: Buffer;
  sealedAt: Date;
}

/**
 * Finishes "save my card" where the paying request could not: the payment was settled Success by
 * the recovery (its acquirer answer was lost), the vault did not answer, or the process died after
 * the outcome's commit. Each card kept sealed for a save (CardSaver) is stored in the vault once its
 * payment succeeded, and wiped once the payment ended without money, or after KEEP_SEALED_MS (logged:
 * not saved). A challenge's card kept sealed for the recovery (PendingAuthorization.sealedOnSession)
 * is wiped once its payment's outcome is recorded, here when the process that recorded it died first.
 * Nothing is locked while the vault is asked: a save repeated by two replicas gives the
 * same token (one per card and customer reference), recorded twice alike.
 */
@Injectable()
export class SaveCardsLeftBehind extends PeriodicSweep {
  protected readonly sweepName = 'Saved cards sweep';
  private readonly seal: CardSeal;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRepository,
    private readonly saver: CardSaver,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {
    super();
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
  }

  protected intervalMs(): number {
    return this.config.CARD_SAVE_SWEEP_MS;
  }

  /** One pass over the sealed cards past the request's grace; returns how many cards it saved. */
  async execute(now = new Date()): Promise<number> {
    let saved = 0;
    let after: Pick<SealedCardRow, 'sealedAt' | 'sessionId'> | null = null;
    for (let batch = BATCH_SIZE; batch === BATCH_SIZE && !this.stopping;) {
      const rows = await this.sealedCards(now, after);
      for (const row of rows) if (await this.settle(row, now)) saved++;
      batch = rows.length;
      after = rows.at(-1) ?? null;
    }
    if (saved > 0) this.logger.log(`Saved ${saved} cards whose payments succeeded without saving them`);
    return saved;
  }

  /** Keyset pages (a card left waiting for the recovery is passed over, not read again). */
  private sealedCards(now: Date, after: Pick<SealedCardRow, 'sealedAt' | 'sessionId'> | null) {
    return this.dataSource.query<SealedCardRow[]>(
      `SELECT id AS "sessionId", transaction_id AS "transactionId", sealed_card AS "sealedCard",
              challenge_completed_at AS "sealedAt"
         FROM three_ds_sessions
        WHERE sealed_card IS NOT NULL AND status <> 'Created' AND challenge_completed_at < $1
          AND (challenge_completed_at, id) > ($2, $3)
        ORDER BY challenge_completed_at, id
        LIMIT ${BATCH_SIZE}`,
      [
        new Date(now.getTime() - REQUEST_GRACE_MS),
        after?.sealedAt ?? new Date(0),
        after?.sessionId ?? '00000000-0000-0000-0000-000000000000',
      ],
    );
  }

  /** Saves, keeps or wipes one sealed card; returns whether it was saved. */
  private async settle(row: SealedCardRow, now: Date): Promise<boolean> {
    const transaction = await this.transactions.byId(row.transactionId);
    const givenUp = row.sealedAt.getTime() <= now.getTime() - KEEP_SEALED_MS;
    const wanted = transaction.saveCardReference !== null && transaction.savedTokenId === null && !givenUp;
    if (wanted && transaction.status === 'Success') {
      const card = this.seal.openOrNull(row.sealedCard, row.sessionId);
      if (card) return this.saver.save(transaction, card);
    } else if (!givenUp && transaction.acquirerPendingSince) {
      return false; // the recovery has not settled it yet (and may have to send the card)
    } else if (givenUp && transaction.status === 'Success' && transaction.savedTokenId === null) {
      this.logger.warn(`Payment ${transaction.id}: its card was not saved within the hour, given up`);
    }
    await this.saver.forget(transaction.id);
    return false;
  }
}
