import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { PaymentCardDto } from '@byrd/contracts';
import { ApiError, ErrorKind } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { checkCard } from '../cards/card-checks.js';
import { CardSeal } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds/three-ds-session.entity.js';
import { PROTOCOL_VERSION, THREE_DS_PROVIDER, type ThreeDSProvider } from '../three-ds/three-ds-provider.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { applyOutcome, PaymentAuthorizer } from './payment-authorizer.js';

/** Tokens are charged once the card vault (gateway-tokens) is installed; until then a clear 400. */
export function refuseTokenPayments(request: { tokenId?: string }): void {
  if (request.tokenId) {
    throw ApiError.invalidField(
      'tokenId',
      'token payments need the card vault (gateway-tokens), which is not installed',
    );
  }
}

export interface ChargeStarted {
  session: ThreeDSSession;
  /** The hosted 3DS page when the shopper must answer a challenge, else null. */
  actionUrl: string | null;
}

/**
 * Puts a card on a payment: checks it, authenticates the shopper (3DS), and either authorises at
 * once (frictionless) or seals the card and answers BYRD207 until the challenge is answered.
 * Mutates the transaction; the caller persists it with the returned session in one DB transaction.
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
      throw new ApiError(
        ErrorKind.BusinessRule,
        'No live acquirer is configured on this platform; use a sandbox key',
        {
          code: 'BYRD291',
        },
      );
    }
  }

  async start(transaction: Transaction, input: PaymentCardDto, now = new Date()): Promise<ChargeStarted> {
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
      return { session, actionUrl: this.actionUrl(session.id) };
    }
    session.challengeRequired = false;
    Object.assign(session, start.result, { challengeCompletedAt: now });
    await this.authorizer.settle(
      transaction,
      { ...card, cvv: input.cvv },
      { ...start.result, dsTransactionId: session.dsTransactionId },
    );
    return { session, actionUrl: null };
  }

  /** The hosted 3DS page that runs the whole flow and returns the shopper to `redirectUrl`. */
  private actionUrl(sessionId: string): string {
    return `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/3ds/authenticate/${sessionId}`;
  }
}
