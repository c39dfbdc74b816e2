import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { CreatePaymentRequest, PaymentResponse } from '@byrd/contracts';
import { ApiError, ErrorKind } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { checkCard } from '../cards/card-checks.js';
import { CardSeal } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds/three-ds-session.entity.js';
import { PROTOCOL_VERSION, THREE_DS_PROVIDER, type ThreeDSProvider } from '../three-ds/three-ds-provider.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { applyOutcome, PaymentAuthorizer } from './payment-authorizer.js';
import { amountToPay, PayerResolver, type PaymentActor } from './payer.js';

export type { PaymentActor };

@Injectable()
export class CreatePayment {
  private readonly seal: CardSeal;

  constructor(
    private readonly dataSource: DataSource,
    private readonly payer: PayerResolver,
    private readonly events: TransactionEventRecorder,
    private readonly authorizer: PaymentAuthorizer,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(THREE_DS_PROVIDER) private readonly threeDS: ThreeDSProvider,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
  }

  async execute(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
  ): Promise<PaymentResponse> {
    if (request.tokenId || !request.card) {
      throw ApiError.invalidField(
        'tokenId',
        'token payments need the card vault (gateway-tokens), which is not installed',
      );
    }
    const { merchantId, mode, order, initiatedFrom } = await this.payer.resolve(actor, request);
    const isoAmount = amountToPay(request, order);
    const card = checkCard(request.card);

    const now = new Date();
    const transaction = this.dataSource.getRepository(Transaction).create({
      id: randomUUID(),
      merchantId,
      merchantMode: mode,
      orderId: order?.orderId ?? null,
      orderRef: request.orderRef ?? order?.orderRef ?? null,
      operationType: (request.isPreAuth ?? order?.isPreAuth) ? 'PreAuth' : 'Payment',
      sourceTransactionId: null,
      paymentMethod: 'card',
      isoAmount,
      currency: request.currency,
      capturedIsoAmount: 0,
      refundedIsoAmount: 0,
      releasedIsoAmount: 0,
      brand: card.brand,
      maskedCardNumber: card.masked,
      cardExpiration: card.expiration,
      holder: request.card.holder ?? null,
      tokenId: null,
      isPreAuth: Boolean(request.isPreAuth ?? order?.isPreAuth),
      transactionMode: 'None',
      initiatedFrom,
      acquirer: this.acquirer.name,
      redirectUrl: request.redirectUrl ?? order?.redirectUrl ?? null,
      requestId,
      fingerprint: randomUUID(),
      asyncDetails: null,
      expiresAt: new Date(now.getTime() + this.config.THREE_DS_TIMEOUT_MS),
      createdAt: now,
      updatedAt: now,
    });
    applyOutcome(transaction, 'Created', 'BYRD207');
    if (!this.acquirer.supports(mode)) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        'No live acquirer is configured on this platform; use a sandbox key',
        {
          code: 'BYRD291',
        },
      );
    }

    const session = this.dataSource.getRepository(ThreeDSSession).create({
      id: randomUUID(),
      transactionId: transaction.id,
      merchantId,
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
    });
    const start = await this.threeDS.start(card);
    if (start.kind === 'challenge') {
      // The shopper must answer the issuer: keep the card sealed until then (never the CVV).
      session.challengeRequired = true;
      session.sealedCard = this.seal.seal({ number: card.number, expiration: card.expiration }, session.id);
    } else {
      session.challengeRequired = false;
      Object.assign(session, start.result, { challengeCompletedAt: now });
      await this.authorizer.settle(
        transaction,
        { ...card, cvv: request.card.cvv },
        { ...start.result, dsTransactionId: session.dsTransactionId },
      );
    }

    await this.dataSource.transaction(async (manager) => {
      await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
      await manager.insert(ThreeDSSession, session as QueryDeepPartialEntity<ThreeDSSession>);
      await this.events.record(manager, transaction);
    });
    this.events.flush();
    return presentPayment(
      transaction,
      session,
      start.kind === 'challenge' ? this.actionUrl(session.id) : null,
    );
  }

  /** The hosted 3DS page that runs the whole flow and returns the shopper to `redirectUrl`. */
  private actionUrl(sessionId: string): string {
    return `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/3ds/authenticate/${sessionId}`;
  }
}
