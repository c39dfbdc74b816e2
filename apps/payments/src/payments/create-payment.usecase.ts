import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { CreatePaymentRequest, PaymentResponse } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { CardCharge } from './card-charge.js';
import { applyOutcome } from './payment-authorizer.js';
import { amountToPay, PayerResolver, type PaymentActor } from './payer.js';

export type { PaymentActor };

/**
 * `POST /api/v2/payment` for cards. With a card the payment is authenticated and authorised now
 * (or waits for the 3DS challenge); without one it is created and waits for
 * `POST /api/v2/payment/{transactionId}/pay` (two-step payments).
 */
@Injectable()
export class CreatePayment {
  constructor(
    private readonly dataSource: DataSource,
    private readonly payer: PayerResolver,
    private readonly events: TransactionEventRecorder,
    private readonly charge: CardCharge,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
  ): Promise<PaymentResponse> {
    if (request.tokenId) {
      throw ApiError.invalidField(
        'tokenId',
        'token payments need the card vault (gateway-tokens), which is not installed',
      );
    }
    const { merchantId, mode, order, initiatedFrom } = await this.payer.resolve(actor, request);
    const now = new Date();
    const isPreAuth = Boolean(request.isPreAuth ?? order?.isPreAuth);
    const transaction: Transaction = Object.assign(new Transaction(), {
      id: randomUUID(),
      merchantId,
      merchantMode: mode,
      orderId: order?.orderId ?? null,
      orderRef: request.orderRef ?? order?.orderRef ?? null,
      operationType: isPreAuth ? 'PreAuth' : 'Payment',
      sourceTransactionId: null,
      paymentMethod: 'card',
      isoAmount: amountToPay(request, order),
      currency: request.currency,
      capturedIsoAmount: 0,
      refundedIsoAmount: 0,
      releasedIsoAmount: 0,
      brand: null,
      maskedCardNumber: null,
      cardExpiration: null,
      holder: null,
      tokenId: null,
      isPreAuth,
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
    } satisfies Partial<Transaction>);
    this.charge.assertAcquirerFor(transaction);

    let started: { session: ThreeDSSession; actionUrl: string | null } | null = null;
    if (request.card) started = await this.charge.start(transaction, request.card, now);
    else applyOutcome(transaction, 'Created', 'BYRD010'); // the card comes with /pay

    await this.dataSource.transaction(async (manager) => {
      await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
      if (started)
        await manager.insert(ThreeDSSession, started.session as QueryDeepPartialEntity<ThreeDSSession>);
      await this.events.record(manager, transaction);
    });
    this.events.flush();
    return presentPayment(transaction, started?.session ?? null, started?.actionUrl ?? null);
  }
}
