import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { isGuid, type CompletePaymentRequest, type PaymentResponse } from '@byrd/contracts';
import { ApiError, checkCard, Refusal } from '@byrd/platform';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { CardCharge, type ChargeStarted } from './card-charge.js';
import { PaymentAuthorizer } from './payment-authorizer.js';
import { paymentAsItStands } from './payment-as-it-stands.js';
import { TokenCharge } from './token-charge.js';
import { PayerResolver, type PaymentActor } from '../payments-core/payer.js';

/** `POST /api/v2/payment/{transactionId}/pay`: the second step of a payment created without a card. */
@Injectable()
export class PayPayment {
  constructor(
    private readonly dataSource: DataSource,
    private readonly payer: PayerResolver,
    private readonly events: TransactionEventRecorder,
    private readonly charge: CardCharge,
    private readonly tokenCharge: TokenCharge,
    private readonly authorizer: PaymentAuthorizer,
  ) {}

  async execute(
    actor: PaymentActor,
    transactionId: string,
    request: CompletePaymentRequest,
    idempotencyKey?: string,
  ): Promise<PaymentResponse> {
    const { card, tokenId } = request;
    if (!card && !tokenId) throw ApiError.invalidField('card', 'card or tokenId is required');
    if (tokenId && 'checkoutKey' in actor) {
      throw ApiError.invalidField(
        'tokenId',
        "token payments are sent by the merchant's backend, with its API key",
      );
    }
    const found = isGuid(transactionId)
      ? await this.dataSource.getRepository(Transaction).findOneBy({ id: transactionId })
      : null;
    const retry = idempotencyKey !== undefined && found?.payIdempotencyKey === idempotencyKey;
    if (!found || !(await this.owns(actor, found, retry)))
      throw ApiError.notFound(`Payment ${transactionId}`);

    type Paid = { earlier: Transaction } | { transaction: Transaction; started: ChargeStarted };
    const paid = await this.dataSource.transaction(async (manager): Promise<Paid> => {
      const transaction = await manager.findOneOrFail(Transaction, {
        where: { id: found.id },
        lock: { mode: 'pessimistic_write' },
      });
      if (
        transaction.paymentMethod !== 'card' ||
        transaction.status !== 'Created' ||
        transaction.maskedCardNumber
      ) {
        if (idempotencyKey !== undefined && transaction.payIdempotencyKey === idempotencyKey) {
          return { earlier: this.sameCardOrRefuse(transaction, request) };
        }
        throw Refusal.notAllowed(`Payment ${transaction.id} is not waiting for a card`);
      }
      const started: ChargeStarted = card
        ? await this.charge.start(transaction, card)
        : await this.tokenCharge.start(transaction, tokenId!);
      // Kept with the card: this request's retry, once its answer was lost, finds what it did.
      transaction.payIdempotencyKey = idempotencyKey ?? null;
      await manager.save(transaction);
      if (started.session)
        await manager.insert(ThreeDSSession, started.session as QueryDeepPartialEntity<ThreeDSSession>);
      // In flight to the acquirer: committed first, announced with its outcome (write-ahead).
      if (!started.authorization) await this.events.record(manager, transaction);
      return { transaction, started };
    });
    if ('earlier' in paid) return paymentAsItStands(this.dataSource, this.charge, paid.earlier);
    const { transaction, started } = paid;
    if (started.authorization) {
      const refusal = await this.authorizer.authorize(transaction, started.authorization);
      if (refusal) throw refusal;
    } else {
      this.events.flush();
    }
    return presentPayment(transaction, started.session, started.actionUrl);
  }

  /**
   * The caller must own the payment: its merchant's key, or the checkout key of its order. A first
   * request is also refused early when the order is closed or held by another payment; a retry of
   * the request that paid is not (its own payment may be what holds the order).
   */
  private async owns(actor: PaymentActor, transaction: Transaction, retry: boolean): Promise<boolean> {
    if ('merchant' in actor) return actor.merchant.merchantId === transaction.merchantId;
    if (!transaction.orderId) return false;
    const merchantId = retry
      ? (await this.payer.orderOfCheckoutKey(transaction.orderId, actor.checkoutKey)).merchantId
      : (await this.payer.resolve(actor, { orderId: transaction.orderId })).merchantId;
    return merchantId === transaction.merchantId;
  }

  /** A retry must carry the card (or token) its first request paid with: the key's body is its own. */
  private sameCardOrRefuse(transaction: Transaction, request: CompletePaymentRequest): Transaction {
    const same = request.tokenId
      ? transaction.tokenId?.toLowerCase() === request.tokenId.toLowerCase()
      : transaction.maskedCardNumber === checkCard(request.card!).masked;
    if (!same) {
      throw Refusal.idempotencyKeyReused(
        `This idempotency-key already paid ${transaction.id} with another card`,
      );
    }
    return transaction;
  }
}
