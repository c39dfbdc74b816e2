import { Inject, Injectable } from '@nestjs/common';
import { describe as describeCode, type ReturnCode, type TransactionStatus } from '@byrd/contracts';
import { ACQUIRER, type Acquirer, type AuthorizationRequest } from '../acquirer/acquirer.js';
import type { AuthenticationResult } from '../three-ds/three-ds-provider.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { CardSaver } from './card-saver.js';

export function applyOutcome(transaction: Transaction, status: TransactionStatus, code: ReturnCode): void {
  transaction.status = status;
  transaction.code = code;
  transaction.description = describeCode(code);
}

/**
 * Turns a 3DS result into a payment outcome: an authenticated (or not enrolled) shopper's card goes
 * to the acquirer; a failed authentication is denied without one; a shopper who gave up is canceled.
 * It holds the card of a shopper-present payment for the last time (frictionless, or opened from its
 * seal after the challenge), so a card its shopper asked to save goes to the vault from here.
 */
@Injectable()
export class PaymentAuthorizer {
  constructor(
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    private readonly cardSaver: CardSaver,
  ) {}

  async settle(
    transaction: Transaction,
    card: { number: string; expiration: string; cvv?: string } | null,
    authentication: AuthenticationResult & { dsTransactionId: string },
  ): Promise<void> {
    const authenticated = authentication.status === 'Authorized' || authentication.status === 'NotEnrolled';
    if (transaction.operationType === 'Verification') {
      // A card verification ends with the authentication: nothing goes to the acquirer.
      if (authenticated) return applyOutcome(transaction, 'Success', 'BYRD200');
    } else if (authenticated && card) {
      await this.authorize(transaction, card, authentication);
      return this.cardSaver.saveIfAsked(transaction, card);
    }
    if (authentication.transStatusReason === '19') {
      applyOutcome(transaction, 'Canceled', 'BYRD208');
    } else {
      applyOutcome(transaction, 'Denied', 'BYRD205');
    }
  }

  /** A payment no shopper takes part in (merchant-initiated, stored card): no 3DS data to pass on. */
  authorizeUnauthenticated(
    transaction: Transaction,
    card: { number: string; expiration: string },
  ): Promise<void> {
    return this.authorize(transaction, card);
  }

  private async authorize(
    transaction: Transaction,
    card: AuthorizationRequest['card'],
    authentication?: AuthorizationRequest['authentication'],
  ): Promise<void> {
    const result = await this.acquirer.authorize({
      transactionId: transaction.id,
      merchantMode: transaction.merchantMode,
      operation: transaction.isPreAuth ? 'PreAuth' : 'Payment',
      isoAmount: transaction.isoAmount,
      currency: transaction.currency,
      card,
      authentication,
    });
    applyOutcome(transaction, result.outcome, result.code);
  }
}
