import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Refusal, type ApiError } from '@byrd/platform';
import {
  ACQUIRER,
  acquirerResult,
  type Acquirer,
  type AcquirerResult,
  type AuthorizationRequest,
} from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { OpenAttempts } from '../async/open-attempts.js';
import type { AuthenticationResult } from '../three-ds-server/three-ds-provider.js';
import { AcquirerOutcomeRecorder } from '../transactions/acquirer-outcome.recorder.js';
import { applyOutcome } from '../transactions/outcome.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { TransactionRepository } from '../transactions/transaction.repository.js';
import { CardSaver } from './card-saver.js';
import { NO_MONEY_HELD, OrderLock } from '../payments-core/order-lock.js';
import { PayerResolver } from '../payments-core/payer.js';
import { anotherPaymentOfKey } from '../payments-core/retried-payment.js';
import { withTimeout } from '../payments-core/timeout.js';

/**
 * The write-ahead state: the transaction is about to go to the acquirer. The caller commits it so
 * before calling `PaymentAuthorizer.authorize`, and announces nothing yet (the outcome's event will).
 */
export function markInFlight(transaction: Transaction, now = new Date()): void {
  applyOutcome(transaction, 'Processing', 'BYRD201');
  transaction.acquirerPendingSince = now;
}

/** A card on its way to the acquirer, held in memory only (never with the row). */
export interface PendingAuthorization {
  card: AuthorizationRequest['card'];
  authentication?: AuthorizationRequest['authentication'];
  /**
   * Its card is also sealed on the payment's 3DS session (a challenge's), kept there until the
   * outcome is recorded so the recovery can still send it: wiped then (CardSaver).
   */
  sealedOnSession?: boolean;
  /** Sent by the recovery (RecoverAcquirerCalls), not by the request that wrote it ahead. */
  resumedByRecovery?: boolean;
}

/**
 * Turns a 3DS result into a payment outcome and runs authorisations, write-ahead: an authenticated
 * (or not enrolled) shopper's card goes to the acquirer; a failed authentication is denied without
 * one; a shopper who gave up is canceled.
 *
 * An authorisation is: the row committed in flight (`markInFlight`, by the caller) → the order's lock
 * taken for it → the acquirer asked under the transaction id → its answer and event recorded in one
 * statement → the lock given back if no money is held. A crash or timeout between any two steps
 * leaves the row in flight, and RecoverAcquirerCalls finishes it from what the acquirer recorded
 * (or, when the acquirer never had it and the card is still sealed on its 3DS session, by sending it).
 */
@Injectable()
export class PaymentAuthorizer {
  private readonly logger = new Logger(PaymentAuthorizer.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
    private readonly outcomes: AcquirerOutcomeRecorder,
    private readonly orderLock: OrderLock,
    private readonly cardSaver: CardSaver,
    private readonly openAttempts: OpenAttempts,
    private readonly payer: PayerResolver,
    private readonly transactions: TransactionRepository,
  ) {}

  /**
   * What a 3DS result means for the payment. When the card must go to the acquirer the transaction
   * is marked in flight and the authorisation to run (after the caller commits) is returned; else
   * the final outcome is applied and null returned.
   */
  applyAuthentication(
    transaction: Transaction,
    card: PendingAuthorization['card'] | null,
    authentication: AuthenticationResult & { dsTransactionId: string },
  ): PendingAuthorization | null {
    const authenticated = authentication.status === 'Authorized' || authentication.status === 'NotEnrolled';
    if (transaction.operationType === 'Verification') {
      // A card verification ends with the authentication: nothing goes to the acquirer.
      if (authenticated) {
        applyOutcome(transaction, 'Success', 'BYRD200');
        return null;
      }
    } else if (authenticated && card) {
      markInFlight(transaction);
      return { card, authentication };
    }
    if (authentication.transStatusReason === '19') applyOutcome(transaction, 'Canceled', 'BYRD208');
    else applyOutcome(transaction, 'Denied', 'BYRD205');
    return null;
  }

  /** A payment no shopper takes part in (merchant-initiated, stored card): no 3DS data to pass on. */
  withoutShopper(transaction: Transaction, card: PendingAuthorization['card']): PendingAuthorization {
    markInFlight(transaction);
    return { card };
  }

  /**
   * Runs a written-ahead authorisation (the transaction is committed in flight) to its recorded
   * outcome; a successful one stores the card in the vault when its shopper asked (CardSaver), then
   * closes the attempt. Returns the order's refusal when it took no lock for it (the transaction is
   * then recorded Denied, BYRD205, and nothing reached the acquirer): final when the order is closed,
   * not when another attempt holds it (`PayerResolver.lockRefusal`); a conflict (409)
   * when another payment of its idempotency-key is charging (recorded Error, `anotherPaymentOfKey`),
   * else null. When the order cannot be asked, a card sent again by the merchant ends Error (the
   * error is thrown); an answered challenge's (`sealedOnSession`) stays in flight for the recovery.
   */
  async authorize(transaction: Transaction, pending: PendingAuthorization): Promise<ApiError | null> {
    if (await anotherPaymentOfKey(this.dataSource, transaction)) {
      // Nothing reached the acquirer: the attempt ends holding no money, the other one goes on.
      await this.end(transaction, acquirerResult('Error'), pending);
      return Refusal.keyInProgress();
    }
    let refusal: ApiError | null;
    try {
      refusal = await this.orderLock.take(transaction);
    } catch (error) {
      if (pending.sealedOnSession) {
        // An answered challenge: its shopper cannot be asked to authenticate again for an outage of
        // ours. The row stays in flight with the card sealed, and RecoverAcquirerCalls asks the order
        // again (then the acquirer) once orders answers; the shopper's page waits on postAuth (409).
        this.logger.warn(
          `Order ${transaction.orderId} not asked for ${transaction.id}; left in flight for the recovery: ${String(error)}`,
        );
        // Nothing was sent to the acquirer, so the recovery need not wait out an acquirer call: due at
        // its next sweep. Not when the recovery itself is asking: then once per delay while orders is away.
        if (!pending.resumedByRecovery) await this.dueForRecovery(transaction);
        return null;
      }
      // The order could not be asked (orders or the broker away). Nothing reached the acquirer, so
      // the attempt ends now holding no money (Error), and the merchant's retry with the same
      // idempotency-key is tried anew, instead of answering an attempt the recovery would only void.
      if (await this.end(transaction, acquirerResult('Error'), pending)) await this.closeAttempt(transaction);
      throw error;
    }
    if (refusal) {
      // Marked before the outcome (true whatever happens next: the card never reaches the acquirer),
      // so a shopper's page reading the Denied payment always knows it was no decline. Only under
      // this request's claim: one that stalled (a paused replica) past the recovery, which settles
      // the payment another way, must not relabel it.
      transaction.refusedByOrder = await this.transactions.markRefusedByOrder(transaction);
      await this.end(transaction, acquirerResult('Denied'), pending);
      return this.payer.lockRefusal(transaction, refusal);
    }
    const result = await this.ask(transaction, pending);
    if (await this.end(transaction, result, pending)) await this.closeAttempt(transaction);
    return null;
  }

  /**
   * Records the outcome (false when another process recorded one first), then saves or forgets the
   * card it kept sealed (CardSaver).
   */
  private async end(transaction: Transaction, result: AcquirerResult, pending: PendingAuthorization) {
    if (!(await this.outcomes.record(transaction, result))) return false;
    await this.cardSaver.afterOutcome(transaction, pending);
    return true;
  }

  /** Best effort: if this fails too, the recovery takes the row after its usual delay. */
  private async dueForRecovery(transaction: Transaction): Promise<void> {
    await this.transactions
      .dueForRecovery(transaction, this.config.ACQUIRER_RECOVERY_AFTER_MS)
      .catch((error: unknown) =>
        this.logger.warn(`${transaction.id} left for the recovery's usual delay: ${String(error)}`),
      );
  }

  /**
   * What a recorded outcome means for the attempt's order: its lock given back when no money is
   * held; on success, the order's other open attempts voided.
   */
  async closeAttempt(transaction: Transaction): Promise<void> {
    if (NO_MONEY_HELD.includes(transaction.status)) return this.orderLock.release(transaction);
    if (transaction.status === 'Success') await this.openAttempts.voidOthers(transaction);
  }

  /** The acquirer's answer; a failure or no answer in time is an unknown outcome (TemporaryFailed). */
  private async ask(transaction: Transaction, pending: PendingAuthorization): Promise<AcquirerResult> {
    const request = this.acquirer.authorize({
      reference: transaction.id,
      merchantMode: transaction.merchantMode,
      operation: transaction.isPreAuth ? 'PreAuth' : 'Payment',
      isoAmount: transaction.isoAmount,
      currency: transaction.currency,
      card: pending.card,
      authentication: pending.authentication,
    });
    return withTimeout(request, this.config.ACQUIRER_TIMEOUT_MS).catch((error: unknown) => {
      this.logger.warn(
        `Acquirer call of ${transaction.id} failed; the recovery settles it: ${String(error)}`,
      );
      return acquirerResult('TemporaryFailed');
    });
  }
}
