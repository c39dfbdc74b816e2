import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CreatePaymentRequest, PaymentResponse } from '@byrd/contracts';
import { ApiError, insertAtomically } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { CardCharge, type ChargeStarted } from './card-charge.js';
import { TokenCharge } from './token-charge.js';
import { applyOutcome } from '../transactions/outcome.js';
import { PaymentAuthorizer } from './payment-authorizer.js';
import { paymentAsItStands } from './payment-as-it-stands.js';
import { retriedPayment } from '../payments-core/retried-payment.js';
import { newPayment } from '../payments-core/new-payment.js';
import {
  amountToPay,
  assertOrderAccepts,
  endingWithOrder,
  PayerResolver,
  preAuthOf,
  type PaymentActor,
} from '../payments-core/payer.js';

export type { PaymentActor };

export interface CardPaymentOptions {
  /**
   * The request's idempotency-key as the payment keeps it (a shopper's scoped by its checkout key:
   * `retriedPayment`): a retry after a crash finds it.
   */
  idempotencyKey?: string;
  /**
   * The hosted form's "save my card": the customer reference (the order's
   * `tokenOptions.customReference`) the card is stored under once the payment succeeds.
   */
  saveCardReference?: string;
}

/** A card payment as created: the transaction, its 3DS session (if any) and the hosted 3DS page. */
export interface CreatedPayment {
  transaction: Transaction;
  session: ThreeDSSession | null;
  /** Set while the shopper must answer a 3DS challenge. */
  actionUrl: string | null;
}

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
    private readonly authorizer: PaymentAuthorizer,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<PaymentResponse> {
    const { key, earlier } = await retriedPayment(
      this.dataSource,
      this.payer,
      actor,
      idempotencyKey,
      request,
    );
    if (earlier) return paymentAsItStands(this.dataSource, this.charge, earlier);
    const { transaction, session, actionUrl } = await this.create(actor, request, requestId, {
      idempotencyKey: key,
    });
    return presentPayment(transaction, session, actionUrl);
  }

  /** Creates, authenticates and (unless a 3DS challenge is pending) authorises the payment; persisted. */
  async create(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
    options: CardPaymentOptions = {},
  ): Promise<CreatedPayment> {
    if (request.tokenId && 'checkoutKey' in actor) {
      throw ApiError.invalidField(
        'tokenId',
        "token payments are sent by the merchant's backend, with its API key",
      );
    }
    const payer = await this.payer.resolve(actor, request);
    // What the shopper may not change: the order's methods and pre-authorisation (amount below;
    // orderRef and redirectUrl in `resolve`).
    if ('checkoutKey' in actor) assertOrderAccepts(payer.order, 'card');
    const isPreAuth = preAuthOf(actor, request, payer.order);
    const now = new Date();
    const transaction = newPayment({
      payer,
      request,
      isoAmount: amountToPay(request, payer.order),
      paymentMethod: 'card',
      isPreAuth,
      acquirer: this.acquirer.name,
      requestId,
      idempotencyKey: options.idempotencyKey,
      expiresAt: new Date(now.getTime() + this.config.THREE_DS_TIMEOUT_MS),
      now,
    });
    this.charge.assertAcquirerFor(transaction);
    if (options.saveCardReference) {
      // The first payment of a stored credential (CardSaver stores the card once it succeeds).
      Object.assign(transaction, {
        saveCardReference: options.saveCardReference,
        transactionMode: 'initialUnescheduled',
      });
    }

    let started: ChargeStarted | null = null;
    if (request.card) started = await this.charge.start(transaction, request.card, now);
    else if (request.tokenId)
      started = await this.tokenCharge.start(transaction, request.tokenId, request.transactionMode, now);
    else applyOutcome(transaction, 'Created', 'BYRD010'); // the card comes with /pay
    if (started?.session) {
      transaction.expiresAt = endingWithOrder(transaction.expiresAt, payer.order);
      started.session.expiresAt = transaction.expiresAt;
    }

    // One statement writes the payment and its 3DS session: atomic, one round trip. A payment about to
    // go to the acquirer is committed in flight first (write-ahead) and announced with its outcome.
    const authorization = started?.authorization;
    await insertAtomically(this.dataSource, [
      { target: Transaction, entity: transaction },
      ...(started?.session ? [{ target: ThreeDSSession, entity: started.session }] : []),
      ...(authorization ? [] : [this.events.outboxRow(transaction)]),
    ]);
    if (authorization) {
      const refusal = await this.authorizer.authorize(transaction, authorization);
      if (refusal) throw refusal;
    } else {
      this.events.flush();
    }
    return { transaction, session: started?.session ?? null, actionUrl: started?.actionUrl ?? null };
  }
}
