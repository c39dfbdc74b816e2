import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import {
  isGuid,
  type CompletePaymentRequest,
  type OrderSummary,
  type PaymentResponse,
} from '@byrd/contracts';
import { ApiError, checkCard, Refusal } from '@byrd/platform';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import { CardCharge, type ChargeStarted } from './card-charge.js';
import { PaymentAuthorizer } from './payment-authorizer.js';
import { paymentAsItStands } from './payment-as-it-stands.js';
import { TokenCharge } from './token-charge.js';
import { endingWithOrder, PayerResolver, type PaymentActor } from '../payments-core/payer.js';

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
    const owned = found ? await this.ownedWithOrder(actor, found, retry) : null;
    if (!found || !owned) throw ApiError.notFound(`Payment ${transactionId}`);

    // Before any outside call: a payment no longer waiting for its card (or this key's retry).
    const settled = this.settledOrRefused(found, request, idempotencyKey);
    if (settled) return paymentAsItStands(this.dataSource, this.charge, settled);

    // The vault's and the 3DS server's calls and the token's checks run before the payment's row is
    // locked: under the lock they would hold a pooled connection each, and the checks' reads need
    // another one (enough of them at once and every connection waits for another).
    const charging = Object.assign(new Transaction(), found);
    const started: ChargeStarted = card
      ? await this.charge.start(charging, card)
      : await this.tokenCharge.start(charging, tokenId!);
    if (started.session) {
      // The shopper's 3DS ends when the order stops accepting payments, if that comes first.
      const order = owned.order ?? (await this.orderIfAny(found));
      charging.expiresAt = endingWithOrder(charging.expiresAt, order);
      started.session.expiresAt = charging.expiresAt;
    }
    // Kept with the card: this request's retry, once its answer was lost, finds what it did.
    charging.payIdempotencyKey = idempotencyKey ?? null;
    const changes = changedFields(found, charging);

    type Paid = { earlier: Transaction } | { transaction: Transaction };
    const paid = await this.dataSource.transaction(async (manager): Promise<Paid> => {
      const transaction = await manager.findOneOrFail(Transaction, {
        where: { id: found.id },
        lock: { mode: 'pessimistic_write' },
      });
      // Another request may have paid it meanwhile: decided under the lock, as two of them race.
      const earlier = this.settledOrRefused(transaction, request, idempotencyKey);
      if (earlier) return { earlier };
      // Only what the charge set: whatever else changed on the row meanwhile stays.
      Object.assign(transaction, changes);
      await manager.save(transaction);
      if (started.session)
        await manager.insert(ThreeDSSession, started.session as QueryDeepPartialEntity<ThreeDSSession>);
      // In flight to the acquirer: committed first, announced with its outcome (write-ahead).
      if (!started.authorization) await this.events.record(manager, transaction);
      return { transaction };
    });
    if ('earlier' in paid) return paymentAsItStands(this.dataSource, this.charge, paid.earlier);
    const { transaction } = paid;
    if (started.authorization) {
      const refusal = await this.authorizer.authorize(transaction, started.authorization);
      if (refusal) throw refusal;
    } else {
      this.events.flush();
    }
    return presentPayment(transaction, started.session, started.actionUrl);
  }

  /**
   * The caller must own the payment: its merchant's key, or the checkout key of its order; null when
   * it does not, else the order a shopper's request read (none read for a merchant's). A shopper's
   * first request is also refused early when the order is closed or held by another payment; a retry
   * of the request that paid is not (its own payment may be what holds the order).
   */
  private async ownedWithOrder(
    actor: PaymentActor,
    transaction: Transaction,
    retry: boolean,
  ): Promise<{ order: OrderSummary | null } | null> {
    if ('merchant' in actor)
      return actor.merchant.merchantId === transaction.merchantId ? { order: null } : null;
    if (!transaction.orderId) return null;
    const order = retry
      ? await this.payer.orderOfCheckoutKey(transaction.orderId, actor.checkoutKey)
      : (await this.payer.resolve(actor, { orderId: transaction.orderId })).order!;
    return order.merchantId === transaction.merchantId ? { order } : null;
  }

  /** A merchant's payment's order, read only for a 3DS deadline; none when orders does not answer. */
  private async orderIfAny(transaction: Transaction): Promise<OrderSummary | null> {
    if (!transaction.orderId) return null;
    return this.payer.currentOrder(transaction.orderId, transaction.merchantId).catch(() => null);
  }

  /**
   * Null while the payment waits for its card; else the payment this key's retry already paid
   * (answered as it stands), or the refusal of a payment that is not waiting for a card.
   */
  private settledOrRefused(
    transaction: Transaction,
    request: CompletePaymentRequest,
    idempotencyKey: string | undefined,
  ): Transaction | null {
    if (
      transaction.paymentMethod === 'card' &&
      transaction.status === 'Created' &&
      !transaction.maskedCardNumber
    ) {
      // Past it, EndUnpaidPayments cancels it: a late card must not charge what the merchant saw end.
      if (transaction.expiresAt.getTime() <= Date.now())
        throw Refusal.notAllowed(
          `Payment ${transaction.id} expired at ${transaction.expiresAt.toISOString()} and can no longer be paid`,
        );
      return null;
    }
    if (idempotencyKey !== undefined && transaction.payIdempotencyKey === idempotencyKey)
      return this.sameCardOrRefuse(transaction, request);
    throw Refusal.notAllowed(`Payment ${transaction.id} is not waiting for a card`);
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

/** The fields of `after` that differ from `before` (a copy of it that a charge then filled in). */
function changedFields(before: Transaction, after: Transaction): Partial<Transaction> {
  const changed: Partial<Transaction> = {};
  for (const field of Object.keys(after) as (keyof Transaction)[]) {
    if (after[field] !== before[field]) Object.assign(changed, { [field]: after[field] });
  }
  return changed;
}
