import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { checkCard, type CheckedCard, Refusal } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { CardSeal } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import {
  PROTOCOL_VERSION,
  THREE_DS_PROVIDER,
  type ThreeDSProvider,
} from '../three-ds-server/three-ds-provider.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { applyOutcome } from '../transactions/outcome.js';
import { PaymentAuthorizer, type PendingAuthorization } from './payment-authorizer.js';

export interface ChargeStarted {
  /** Null when no shopper takes part (a merchant-initiated token payment). */
  session: ThreeDSSession | null;
  /** The hosted 3DS page when the shopper must answer a challenge, else null. */
  actionUrl: string | null;
  /**
   * Set when the card goes to the acquirer now: the transaction is marked in flight, and the caller
   * commits it before running this with `PaymentAuthorizer.authorize` (write-ahead).
   */
  authorization: PendingAuthorization | null;
}

/** A card as the checks and the acquirer take it (a stored card has no CVV). */
export interface CardToCharge {
  number: string;
  expiration: string;
  cvv?: string;
  holder?: string | null;
}

/**
 * Puts a card on a payment: checks it, authenticates the shopper (3DS), and either readies the
 * authorisation (frictionless) or seals the card and answers BYRD207 until the challenge is answered.
 * Mutates the transaction; the caller persists it with the returned session, then runs the
 * authorisation if there is one. Nothing here leaves the process: the acquirer is asked only after.
 */
@Injectable()
export class CardCharge {
  private readonly seal: CardSeal;

  constructor(
    private readonly authorizer: PaymentAuthorizer,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(THREE_DS_PROVIDER) private readonly threeDS: ThreeDSProvider,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
  }

  /** Refuses early what no acquirer here can take (live keys on the sandbox). */
  assertAcquirerFor(transaction: Pick<Transaction, 'merchantMode'>): void {
    if (!this.acquirer.supports(transaction.merchantMode)) {
      throw Refusal.noAcquirer('No live acquirer is configured on this platform; use a sandbox key');
    }
  }

  async start(
    transaction: Transaction,
    input: CardToCharge,
    now = new Date(),
  ): Promise<ChargeStarted & { session: ThreeDSSession }> {
    const card = this.putCard(transaction, input, now);
    applyOutcome(transaction, 'Created', 'BYRD207');

    const session: ThreeDSSession = Object.assign(new ThreeDSSession(), {
      id: randomUUID(),
      transactionId: transaction.id,
      merchantId: transaction.merchantId,
      status: 'Created',
      acsTransId: randomUUID(),
      dsTransactionId: randomUUID(),
      protocolVersion: PROTOCOL_VERSION,
      transStatus: null,
      transStatusReason: null,
      eci: null,
      aav: null,
      challengeCompletedAt: null,
      checkClaimId: null,
      checkClaimedUntil: null,
      sealedCard: null,
      browser: null,
      expiresAt: transaction.expiresAt,
      createdAt: now,
      updatedAt: now,
    } satisfies Partial<ThreeDSSession>);

    const start = await this.threeDS.start(card);
    if (start.kind === 'challenge') {
      // The shopper must answer the issuer: keep the card sealed until then (never the CVV).
      session.challengeRequired = true;
      session.sealedCard = this.seal.seal({ number: card.number, expiration: card.expiration }, session.id);
      return { session, actionUrl: this.actionUrl(session.id), authorization: null };
    }
    session.challengeRequired = false;
    Object.assign(session, start.result, { challengeCompletedAt: now });
    const authorization = this.authorizer.applyAuthentication(
      transaction,
      { ...card, cvv: input.cvv },
      { ...start.result, dsTransactionId: session.dsTransactionId },
    );
    // "Save my card": kept sealed until the vault has it, so a lost answer or a crash does not lose it.
    if (authorization && transaction.saveCardReference)
      session.sealedCard = this.seal.seal({ number: card.number, expiration: card.expiration }, session.id);
    return { session, actionUrl: null, authorization };
  }

  /**
   * A merchant-initiated payment of a stored card: no shopper is present to authenticate, so the
   * card goes to the acquirer at once (once persisted), marked as not authenticated.
   */
  chargeWithoutShopper(transaction: Transaction, input: CardToCharge, now = new Date()): ChargeStarted {
    const card = this.putCard(transaction, input, now);
    return {
      session: null,
      actionUrl: null,
      authorization: this.authorizer.withoutShopper(transaction, card),
    };
  }

  private putCard(transaction: Transaction, input: CardToCharge, now: Date): CheckedCard {
    const card = checkCard(input);
    this.assertAcquirerFor(transaction);
    Object.assign(transaction, {
      brand: card.brand,
      maskedCardNumber: card.masked,
      cardExpiration: card.expiration,
      holder: input.holder ?? transaction.holder ?? null,
      acquirer: this.acquirer.name,
      expiresAt: new Date(now.getTime() + this.config.THREE_DS_TIMEOUT_MS),
    });
    return card;
  }

  /** The hosted 3DS page that runs the whole flow and returns the shopper to `redirectUrl`. */
  actionUrl(sessionId: string): string {
    return `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/3ds/authenticate/${sessionId}`;
  }
}
