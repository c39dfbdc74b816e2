import { randomUUID } from 'node:crypto';
import {
  EventConsumers,
  loadConfig,
  MerchantDirectory,
  NatsContext,
  Outbox,
  Rpc,
  RpcIdentity,
} from '@byrd/platform';
import { MediumDatabase, newRunId, TEST_NATS_URL } from '@byrd/platform/testing';
import type { Acquirer } from '../src/acquirer/acquirer.js';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { OpenAttempts } from '../src/async/open-attempts.js';
import { SandboxAsyncPaymentProvider } from '../src/async/sandbox-async-provider.js';
import { Chargeback } from '../src/chargebacks/chargeback.entity.js';
import { paymentsConfigSchema, type PaymentsConfig } from '../src/config.js';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '../src/database.js';
import { newPayment } from '../src/payments-core/new-payment.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { PayerResolver } from '../src/payments-core/payer.js';
import { CardSaver } from '../src/payments/card-saver.js';
import { PaymentAuthorizer } from '../src/payments/payment-authorizer.js';
import { AcquirerOutcomeRecorder } from '../src/transactions/acquirer-outcome.recorder.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import type { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { TransactionRepository } from '../src/transactions/transaction.repository.js';

type Balances = Partial<Pick<Transaction, 'capturedIsoAmount' | 'refundedIsoAmount' | 'releasedIsoAmount'>>;

/**
 * Payments' medium tier: a fresh migrated payments database (MediumDatabase), the config, and the
 * platform pieces use cases take (outbox with its relay off, so events stay as rows to read; an RPC
 * client on the real broker that these tests never call), plus rows to start from.
 */
export class PaymentsMedium {
  readonly transactions: TransactionRepository;

  private constructor(
    readonly db: MediumDatabase,
    readonly config: PaymentsConfig,
    private readonly nats: NatsContext,
    /** This run's own, empty merchant directory (checkout origins): its buckets go with `close`. */
    readonly merchants: MerchantDirectory,
    private readonly runId: string,
  ) {
    this.transactions = new TransactionRepository(db.dataSource);
  }

  static async start(): Promise<PaymentsMedium> {
    const db = await MediumDatabase.create({
      service: 'payments',
      entities: PAYMENTS_ENTITIES,
      migrations: PAYMENTS_MIGRATIONS,
    });
    const config = loadConfig(paymentsConfigSchema, {
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      OUTBOX_RELAY_ENABLED: 'false',
    });
    const nats = await NatsContext.open(
      { url: TEST_NATS_URL, name: 'payments-medium' },
      `medium${randomUUID()}.`,
    );
    const runId = newRunId();
    const merchants = new MerchantDirectory(
      await nats.kv(`MERCHANTS_${runId}`),
      await nats.kv(`API_KEYS_${runId}`),
    );
    return new PaymentsMedium(db, config, nats, merchants, runId);
  }

  get dataSource() {
    return this.db.dataSource;
  }

  outbox(): Outbox {
    const { dataSource, nats, config } = this;
    return new Outbox(dataSource, nats, config, new EventConsumers(dataSource, nats, config));
  }

  rpc(): Rpc {
    return new Rpc(this.nats, 'payments', RpcIdentity.fromConfig('payments', this.config));
  }

  /** Who pays: the merchant, or an order's shopper (orders asked over RPC). */
  payer(): PayerResolver {
    return new PayerResolver(this.rpc(), this.dataSource, this.merchants);
  }

  /** A PaymentAuthorizer on the sandbox acquirer (or `acquirer`), recording through `events`. */
  authorizer(
    events: TransactionEventRecorder,
    config: PaymentsConfig = this.config,
    acquirer: Acquirer = new SandboxAcquirer(this.dataSource, config),
  ): PaymentAuthorizer {
    const { dataSource } = this;
    return new PaymentAuthorizer(
      dataSource,
      acquirer,
      config,
      new AcquirerOutcomeRecorder(dataSource, events),
      new OrderLock(this.rpc()),
      new CardSaver(this.rpc(), dataSource),
      new OpenAttempts(dataSource, events, new SandboxAsyncPaymentProvider(), config),
      this.payer(),
      this.transactions,
    );
  }

  async close(): Promise<void> {
    for (const bucket of [`MERCHANTS_${this.runId}`, `API_KEYS_${this.runId}`]) {
      await this.nats.jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
    }
    await this.nats.close();
    await this.db.close();
  }

  /** A new card payment (or pre-authorisation) of no order, in memory: not yet written. */
  orderless(
    merchantId: string,
    isoAmount: number,
    options: { isPreAuth?: boolean; idempotencyKey?: string } = {},
  ): Transaction {
    const now = new Date();
    return newPayment({
      payer: { merchantId, mode: 'sandbox', order: null, initiatedFrom: 'Server', orderRef: null },
      request: { currency: 'EUR' },
      isoAmount,
      paymentMethod: 'card',
      isPreAuth: options.isPreAuth ?? false,
      acquirer: 'SIMULATED',
      requestId: randomUUID(),
      idempotencyKey: options.idempotencyKey,
      expiresAt: new Date(now.getTime() + 3_600_000),
      now,
    });
  }

  /** A settled (Success) payment or pre-authorisation of `isoAmount` euro cents, with its balances. */
  async settled(
    merchantId: string,
    operationType: 'Payment' | 'PreAuth',
    isoAmount: number,
    balances: Balances = {},
  ): Promise<Transaction> {
    const transaction = this.orderless(merchantId, isoAmount, { isPreAuth: operationType === 'PreAuth' });
    applyOutcome(transaction, 'Success', 'BYRD200');
    return this.insert(Object.assign(transaction, balances));
  }

  /** A successful capture of `preAuth` recorded earlier (the caller counts it on the pre-auth). */
  capturedEarlier(
    preAuth: Transaction,
    isoAmount: number,
    change: (capture: Transaction) => void = () => {},
  ): Promise<Transaction> {
    const capture = Object.assign(new Transaction(), {
      ...preAuth,
      id: randomUUID(),
      operationType: 'Capture',
      sourceTransactionId: preAuth.id,
      isoAmount,
      capturedIsoAmount: 0,
      refundedIsoAmount: 0,
      releasedIsoAmount: 0,
      isPreAuth: false,
      fingerprint: randomUUID(),
    });
    change(capture);
    return this.insert(capture);
  }

  /**
   * A capture of `preAuth` written ahead and still waiting for the acquirer (the process died, or it
   * answered TemporaryFailed): the caller reserves it on the pre-auth, as RunOperation does.
   */
  captureInFlight(preAuth: Transaction, isoAmount: number): Promise<Transaction> {
    return this.capturedEarlier(preAuth, isoAmount, (capture) => {
      applyOutcome(capture, 'TemporaryFailed', 'BYRD203');
      capture.acquirerPendingSince = new Date();
    });
  }

  async insert(transaction: Transaction): Promise<Transaction> {
    await this.dataSource.transaction((manager) => this.transactions.insert(manager, transaction));
    return transaction;
  }

  async chargeback(
    transaction: Transaction,
    isoAmount: number,
    state: Pick<Chargeback, 'status' | 'resolution'>,
  ): Promise<void> {
    const now = new Date();
    await this.dataSource.getRepository(Chargeback).insert({
      id: randomUUID(),
      merchantId: transaction.merchantId,
      transactionId: transaction.id,
      orderId: null,
      paymentMethod: 'card',
      isoAmount,
      currency: 'EUR',
      reason: null,
      createdAt: now,
      updatedAt: now,
      ...state,
    });
  }

  reload(id: string): Promise<Transaction> {
    return this.dataSource.getRepository(Transaction).findOneByOrFail({ id });
  }
}
