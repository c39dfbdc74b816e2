import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, QueryFailedError } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import {
  ASYNC_PAYMENT_CURRENCY,
  OPEN_ORDER_STATUSES,
  paymentTypeTakesCurrency,
  type AsyncPaymentType,
  type CreatePaymentRequest,
  type PaymentResponse,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { applyOutcome } from '../transactions/outcome.js';
import { retriedPayment, retriedPaymentUnderKeyLock } from '../payments-core/retried-payment.js';
import { newPayment } from '../payments-core/new-payment.js';
import {
  amountToPay,
  assertOrderAccepts,
  endingWithOrder,
  PayerResolver,
  preAuthOf,
  type Payer,
  type PaymentActor,
} from '../payments-core/payer.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { presentAsyncDetails, presentPayment } from '../transactions/transaction.presenter.js';
import { ASYNC_PAYMENT_PROVIDER, type AsyncPaymentProvider } from './async-payment-provider.js';
import { OpenAttempts } from './open-attempts.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { withTimeout } from '../payments-core/timeout.js';

/** The partial unique index keeping a merchant's pending Multibanco references distinct (migration 1763800000400). */
export const PENDING_REFERENCE_INDEX = 'transactions_pending_multibanco_reference_idx';
/** A 9-digit reference collides rarely; a few fresh draws always find a free one. */
const REFERENCE_ATTEMPTS = 5;

/**
 * `POST /api/v2/payment` with `type: multibanco | mbway`: the shopper pays later, outside our pages,
 * so the payment answers BYRD201 Processing at once and announces transaction.payment.pending.
 */
@Injectable()
export class CreateAsyncPayment {
  private readonly logger = new Logger(CreateAsyncPayment.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly payer: PayerResolver,
    private readonly events: TransactionEventRecorder,
    @Inject(ASYNC_PAYMENT_PROVIDER) private readonly provider: AsyncPaymentProvider,
    private readonly openAttempts: OpenAttempts,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  async execute(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<PaymentResponse> {
    const transaction = await this.attempt(actor, request, requestId, idempotencyKey);
    return {
      ...presentPayment(transaction, null, null),
      type: request.type,
      ...presentAsyncDetails(transaction),
    };
  }

  /**
   * The payment of this attempt: as card payments, a retry (the merchant's, a shopper's on
   * `?checkoutKey=` or the hosted form's) whose first request died or lost its answer after the
   * commit answers the payment it created (one reference, one MB WAY request on the phone), unless
   * that one failed; else a new one.
   */
  async attempt(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<Transaction> {
    const { key, earlier } = await retriedPayment(
      this.dataSource,
      this.payer,
      actor,
      idempotencyKey,
      request,
    );
    return earlier ?? (await this.create(actor, request, requestId, key));
  }

  /**
   * Creates the payment, with what its shopper needs to pay (reference, or the MB WAY request);
   * persisted. Returns the payment of its idempotency-key another request committed meanwhile instead.
   */
  async create(
    actor: PaymentActor,
    request: CreatePaymentRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<Transaction> {
    const type = request.type as AsyncPaymentType;
    if (request.isPreAuth) {
      throw ApiError.invalidField(
        'isPreAuth',
        `${type} payments settle when the shopper pays; they cannot pre-authorise`,
      );
    }
    if (!paymentTypeTakesCurrency(type, request.currency))
      throw ApiError.invalidField('currency', `${type} payments are in ${ASYNC_PAYMENT_CURRENCY} only`);
    const payer = await this.payer.resolve(actor, request);
    const isoAmount = amountToPay(request, payer.order);
    assertOrderAccepts(payer.order, type);
    // Refused before any reference is drawn or push sent: the order asks only to hold the money
    // (decided as for a card: the order for its shopper, the merchant's request for the merchant).
    if (preAuthOf(actor, request, payer.order)) {
      throw Refusal.methodNotAccepted(
        `Order ${payer.order?.orderId} asks for a pre-authorisation (paymentOptions.cardOptions.isPreAuth); ` +
          `${type} payments settle in full when the shopper pays and cannot pre-authorise: pay it by card`,
      );
    }
    if (!this.provider.supports(payer.mode)) {
      throw Refusal.noAcquirer('No live processor is configured for async methods; use a sandbox key');
    }

    const transaction = this.newTransaction(type, request, payer, isoAmount, requestId, idempotencyKey);
    const providerRequest = {
      merchantId: payer.merchantId,
      transactionId: transaction.id,
      isoAmount,
      currency: request.currency,
      expiresAt: transaction.expiresAt,
    };
    if (type === 'mbway') {
      // Recorded first: a push the shopper accepts must always find its payment here. If the
      // processor cannot reach the phone, the payment ends Error and the caller sees why; but an
      // error may also come after the push went out and the shopper paid: then the caller gets
      // the payment as it settled.
      const phoneNumber = request.mbway!.phoneNumber;
      transaction.asyncDetails = { phoneNumber };
      const saved = await this.save(transaction, request);
      if (saved !== transaction) return saved;
      // Bounded: a processor that never answers must not hold the shopper's request (and its key).
      const push = this.provider.requestMbWay({ ...providerRequest, phoneNumber });
      await withTimeout(push, this.config.ACQUIRER_TIMEOUT_MS).catch(async (error: unknown) => {
        if (await this.fail(transaction)) throw error;
      });
    } else {
      const saved = await this.saveWithFreshReference(transaction, request, () =>
        withTimeout(this.provider.multibancoReference(providerRequest), this.config.ACQUIRER_TIMEOUT_MS),
      );
      if (saved !== transaction) {
        // The reference drawn for the payment not made must not stay payable at the processor.
        await this.provider.cancel(transaction).catch((error: unknown) => {
          this.logger.warn(`Unused Multibanco reference of ${transaction.id} not voided: ${String(error)}`);
        });
        return saved;
      }
    }
    this.events.flush();
    return payer.order
      ? this.voidIfOrderClosed(transaction, payer.merchantId, payer.order.orderId)
      : transaction;
  }

  /**
   * The order may have closed (canceled, or paid another way) since it was read, and its event been
   * handled before this payment was committed, which left this attempt payable: it is voided here
   * then. Best effort: a settlement that arrives anyway finds the order closed and is refunded at once.
   */
  private async voidIfOrderClosed(
    transaction: Transaction,
    merchantId: string,
    orderId: string,
  ): Promise<Transaction> {
    try {
      const order = await this.payer.currentOrder(orderId, merchantId);
      if (OPEN_ORDER_STATUSES.includes(order.status)) return transaction;
      await this.openAttempts.voidAttempt(transaction);
      return await this.dataSource.getRepository(Transaction).findOneByOrFail({ id: transaction.id });
    } catch (error) {
      this.logger.warn(`Async payment ${transaction.id} of a closed order not voided: ${String(error)}`);
      return transaction;
    }
  }

  private newTransaction(
    type: AsyncPaymentType,
    request: CreatePaymentRequest,
    payer: Payer,
    isoAmount: number,
    requestId: string,
    idempotencyKey?: string,
  ): Transaction {
    const now = new Date();
    // The shopper cannot pay after the order stops accepting payments.
    const expiresAt = endingWithOrder(new Date(now.getTime() + this.provider.lifetimeMs(type)), payer.order);
    const transaction = newPayment({
      payer,
      request,
      isoAmount,
      paymentMethod: type,
      isPreAuth: false,
      acquirer: this.provider.name,
      requestId,
      idempotencyKey,
      expiresAt,
      now,
    });
    applyOutcome(transaction, 'Processing', 'BYRD201');
    return transaction;
  }

  /**
   * The row and its pending event commit together (outbox), so the order always hears of it. Not
   * written when a request of its idempotency-key committed a payment since `retriedPayment` looked:
   * that one is returned, so the shopper gets one reference or one push to their phone.
   */
  private async save(transaction: Transaction, request: CreatePaymentRequest): Promise<Transaction> {
    return this.dataSource.transaction(async (manager) => {
      const earlier = await retriedPaymentUnderKeyLock(manager, transaction, request);
      if (earlier) return earlier;
      await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
      await this.events.record(manager, transaction);
      return transaction;
    });
  }

  /**
   * The MB WAY request failed: the payment, if still pending, ends in error, announced; returns
   * whether it did. One the shopper settled meanwhile keeps its outcome (`transaction` is reloaded
   * as it stands): an Error written over a Success would hide money taken and free its order.
   */
  private async fail(transaction: Transaction): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const updatedAt = new Date();
      const failed = Object.assign(new Transaction(), transaction);
      applyOutcome(failed, 'Error', 'BYRD299');
      const { status, code, description } = failed;
      const { affected } = await manager.update(
        Transaction,
        { id: transaction.id, status: 'Processing' },
        { status, code, description, updatedAt },
      );
      if (!affected) {
        Object.assign(transaction, await manager.findOneByOrFail(Transaction, { id: transaction.id }));
        return false;
      }
      Object.assign(transaction, { status, code, description, updatedAt });
      await this.events.record(manager, transaction);
      return true;
    });
  }

  /**
   * The database decides uniqueness (a partial unique index over pending references), so two
   * concurrent payments can never be handed the same reference; a collision draws a new one.
   */
  private async saveWithFreshReference(
    transaction: Transaction,
    request: CreatePaymentRequest,
    draw: () => Promise<{ entity: string; reference: string }>,
  ): Promise<Transaction> {
    for (let attempt = 1; ; attempt++) {
      const { entity, reference } = await draw();
      transaction.asyncDetails = { entity, reference };
      try {
        return await this.save(transaction, request);
      } catch (error) {
        if (attempt >= REFERENCE_ATTEMPTS || !isUniqueViolation(error, PENDING_REFERENCE_INDEX)) throw error;
      }
    }
  }
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && driverError.constraint === constraint;
}
