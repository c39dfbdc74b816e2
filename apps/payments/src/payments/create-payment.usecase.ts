import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CreatePaymentRequest, PaymentResponse } from '@byrd/contracts';
import { ApiError, insertAtomically } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-events.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { CardCharge, type ChargeStarted } from './card-charge.js';
import { TokenCharge } from './token-charge.js';
import { applyOutcome } from './payment-authorizer.js';
import { newPayment } from './new-payment.js';
import { amountToPay, PayerResolver, type PaymentActor } from './payer.js';

export type { PaymentActor };

/**
 * `POST /api/v2/payment` for cards. With a card or a token the payment is authenticated and
 * authorised now (or waits for the 3DS challenge); without either it is created and waits for
 * `POST /api/v2/payment/{transactionId}/pay` (two-step payments).
 */
@Injectable()
export class CreatePayment {
  constructor(
    private readonly dataSource: DataSource,
    private readonly payer: PayerResolver,
    private readonly events: TransactionEventRecorder,
    private readonly charge: CardCharge,
    private readonly tokenCharge: TokenCharge,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
  ): Promise<PaymentResponse> {
    if (request.tokenId && 'checkoutKey' in actor) {
      throw ApiError.invalidField(
        'tokenId',
        "token payments are sent by the merchant's backend, with its API key",
      );
    }
    const payer = await this.payer.resolve(actor, request);
    const now = new Date();
    const transaction = newPayment({
      payer,
      request,
      isoAmount: amountToPay(request, payer.order),
      paymentMethod: 'card',
      isPreAuth: Boolean(request.isPreAuth ?? payer.order?.isPreAuth),
      acquirer: this.acquirer.name,
      requestId,
      expiresAt: new Date(now.getTime() + this.config.THREE_DS_TIMEOUT_MS),
      now,
    });
    this.charge.assertAcquirerFor(transaction);

    let started: ChargeStarted | null = null;
    if (request.card) started = await this.charge.start(transaction, request.card, now);
    else if (request.tokenId)
      started = await this.tokenCharge.start(transaction, request.tokenId, request.transactionMode, now);
    else applyOutcome(transaction, 'Created', 'BYRD010'); // the card comes with /pay

    // One statement writes the payment, its 3DS session and its event: atomic, one round trip.
    await insertAtomically(this.dataSource, [
      { target: Transaction, entity: transaction },
      ...(started?.session ? [{ target: ThreeDSSession, entity: started.session }] : []),
      this.events.outboxRow(transaction),
    ]);
    this.events.flush();
    return presentPayment(transaction, started?.session ?? null, started?.actionUrl ?? null);
  }
}
