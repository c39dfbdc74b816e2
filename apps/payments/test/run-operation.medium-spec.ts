import { randomUUID } from 'node:crypto';
import {
  ApiError,
  ErrorKind,
  EventConsumers,
  loadConfig,
  NatsContext,
  Outbox,
  OutboxMessage,
  Rpc,
  RpcIdentity,
} from '@byrd/platform';
import { MediumDatabase } from '@byrd/platform/testing';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { Chargeback } from '../src/chargebacks/chargeback.entity.js';
import { ChargebackRepository } from '../src/chargebacks/chargeback.repository.js';
import { paymentsConfigSchema } from '../src/config.js';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '../src/database.js';
import type { FollowUpOperation } from '../src/operations/operation-rules.js';
import { RunOperation } from '../src/operations/run-operation.usecase.js';
import { newPayment } from '../src/payments-core/new-payment.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { TransactionRepository } from '../src/transactions/transaction.repository.js';

/**
 * RunOperation on a real PostgreSQL with the payments migrations (medium tier): the balance rules of
 * capture, refund and release, as the repositories read and write them, with the sandbox acquirer's
 * amount rules deciding (capture: 20.00 and below denied; refund: 30.00 and below denied). Transactions
 * belong to no order, so no order lock is asked for; events stay in the outbox (relay off).
 */
describe('RunOperation (medium)', () => {
  let db: MediumDatabase;
  let nats: NatsContext;
  let run: RunOperation;
  let transactions: TransactionRepository;
  let merchantId: string;

  beforeAll(async () => {
    db = await MediumDatabase.create({
      service: 'payments',
      entities: PAYMENTS_ENTITIES,
      migrations: PAYMENTS_MIGRATIONS,
    });
    const natsUrl = process.env.TEST_NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    const config = loadConfig(paymentsConfigSchema, {
      DATABASE_URL: db.url,
      NATS_URL: natsUrl,
      OUTBOX_RELAY_ENABLED: 'false',
    });
    nats = await NatsContext.open({ url: natsUrl, name: 'payments-medium' }, `medium${randomUUID()}.`);
    const outbox = new Outbox(db.dataSource, nats, config, new EventConsumers(db.dataSource, nats, config));
    const rpc = new Rpc(nats, 'payments', RpcIdentity.fromConfig('payments', config));
    transactions = new TransactionRepository(db.dataSource);
    run = new RunOperation(
      db.dataSource,
      transactions,
      new ChargebackRepository(),
      new TransactionEventRecorder(outbox),
      new OrderLock(rpc),
      new SandboxAcquirer(db.dataSource, config),
      config,
    );
  });

  afterAll(async () => {
    await nats?.close();
    await db?.close();
  });

  beforeEach(() => {
    merchantId = `merchant-${randomUUID()}`;
  });

  const merchant = () => ({ merchantId, merchantName: 'Medium', mode: 'sandbox' as const, scopes: [] });

  /** A settled payment or pre-authorisation of `isoAmount` euro cents (with its balances). */
  async function settled(
    operationType: 'Payment' | 'PreAuth',
    isoAmount: number,
    balances: Partial<
      Pick<Transaction, 'capturedIsoAmount' | 'refundedIsoAmount' | 'releasedIsoAmount'>
    > = {},
  ): Promise<Transaction> {
    const now = new Date();
    const transaction = newPayment({
      payer: { merchantId, mode: 'sandbox', order: null, initiatedFrom: 'Server' },
      request: { currency: 'EUR' },
      isoAmount,
      paymentMethod: 'card',
      isPreAuth: operationType === 'PreAuth',
      acquirer: 'SIMULATED',
      requestId: randomUUID(),
      expiresAt: new Date(now.getTime() + 3_600_000),
      now,
    });
    applyOutcome(transaction, 'Success', 'BYRD200');
    Object.assign(transaction, balances);
    await db.dataSource.transaction((manager) => transactions.insert(manager, transaction));
    return transaction;
  }

  /** A capture of `preAuth` recorded earlier (its balance already counted on the pre-auth by the caller). */
  async function capturedEarlier(preAuth: Transaction, isoAmount: number): Promise<Transaction> {
    const capture = Object.assign(new Transaction(), {
      ...preAuth,
      id: randomUUID(),
      operationType: 'Capture',
      sourceTransactionId: preAuth.id,
      isoAmount,
      capturedIsoAmount: 0,
      isPreAuth: false,
      fingerprint: randomUUID(),
    });
    await db.dataSource.transaction((manager) => transactions.insert(manager, capture));
    return capture;
  }

  async function chargeback(
    transaction: Transaction,
    isoAmount: number,
    state: Pick<Chargeback, 'status' | 'resolution'>,
  ): Promise<void> {
    const now = new Date();
    await db.dataSource.getRepository(Chargeback).insert({
      id: randomUUID(),
      merchantId,
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

  const execute = (operation: FollowUpOperation, sourceId: string, isoAmount?: number) =>
    run.execute(merchant(), operation, sourceId, isoAmount === undefined ? {} : { isoAmount }, randomUUID());

  /** The refusal `attempt` is rejected with (its kind, return code and message). */
  async function refusal(attempt: Promise<unknown>): Promise<ApiError> {
    const error = await attempt.then(
      () => {
        throw new Error('expected a refusal, the operation ran');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  const reload = (id: string) => db.dataSource.getRepository(Transaction).findOneByOrFail({ id });
  const operationsOn = (sourceId: string) =>
    db.dataSource.getRepository(Transaction).findBy({ sourceTransactionId: sourceId });
  const eventsOf = async (transactionId: string) =>
    (await db.dataSource.getRepository(OutboxMessage).find())
      .filter(
        (row) => (row.payload as { data?: { transactionId?: string } }).data?.transactionId === transactionId,
      )
      .map((row) => row.subject);

  describe('capture', () => {
    it('captures part of a pre-authorisation: the capture is recorded and announced, the rest stays held', async () => {
      const preAuth = await settled('PreAuth', 5000);
      const answer = await execute('Capture', preAuth.id, 3000);
      expect(answer).toMatchObject({
        status: 'Success',
        code: 'BYRD200',
        isoAmount: 3000,
        sourceTransaction: { transactionId: preAuth.id, isoCapturedAmount: 3000, isoRemainingAmount: 2000 },
      });
      expect((await reload(preAuth.id)).capturedIsoAmount).toBe(3000);
      const [capture] = await operationsOn(preAuth.id);
      expect(capture).toMatchObject({
        id: answer.transactionId,
        operationType: 'Capture',
        status: 'Success',
      });
      expect(capture.acquirerPendingSince).toBeNull();
      expect(await eventsOf(capture.id)).toEqual(['transaction.capture.success']);
    });

    it('gives the reserved amount back when the acquirer denies the capture', async () => {
      const preAuth = await settled('PreAuth', 5000);
      const answer = await execute('Capture', preAuth.id, 1500);
      expect(answer).toMatchObject({ status: 'Denied', sourceTransaction: { isoRemainingAmount: 5000 } });
      expect((await reload(preAuth.id)).capturedIsoAmount).toBe(0);
    });

    it('refuses a payment, and more than the pre-authorisation still holds, recording nothing', async () => {
      const payment = await settled('Payment', 5000);
      expect(await refusal(execute('Capture', payment.id))).toMatchObject({
        code: 'BYRD205',
        message: 'Only a pre-authorisation can be captured',
      });
      const preAuth = await settled('PreAuth', 5000, { capturedIsoAmount: 4000 });
      expect(await refusal(execute('Capture', preAuth.id, 2500))).toMatchObject({ code: 'BYRD205' });
      expect(await operationsOn(payment.id)).toEqual([]);
      expect(await operationsOn(preAuth.id)).toEqual([]);
      expect((await reload(preAuth.id)).capturedIsoAmount).toBe(4000);
    });
  });

  describe('release', () => {
    it('releases what an uncaptured pre-authorisation holds', async () => {
      const preAuth = await settled('PreAuth', 5000);
      const answer = await execute('Release', preAuth.id);
      expect(answer).toMatchObject({ status: 'Success', isoAmount: 5000 });
      expect((await reload(preAuth.id)).releasedIsoAmount).toBe(5000);
      expect(await refusal(execute('Release', preAuth.id))).toMatchObject({
        code: 'BYRD205',
        message: 'The pre-authorisation was already released',
      });
    });

    it('refuses to release a captured pre-authorisation', async () => {
      const preAuth = await settled('PreAuth', 5000, { capturedIsoAmount: 3000 });
      expect(await refusal(execute('Release', preAuth.id))).toMatchObject({
        code: 'BYRD205',
        message: 'A captured pre-authorisation cannot be released; refund it instead',
      });
    });
  });

  describe('refund', () => {
    it('refunds a payment up to what is left, then refuses beyond it (BYRD231)', async () => {
      const payment = await settled('Payment', 8000);
      expect(await execute('Refund', payment.id, 4000)).toMatchObject({
        status: 'Success',
        sourceTransaction: { isoRefundedAmount: 4000, isoRemainingAmount: 4000 },
      });
      expect(await refusal(execute('Refund', payment.id, 4100))).toMatchObject({ code: 'BYRD231' });
      expect((await reload(payment.id)).refundedIsoAmount).toBe(4000);
    });

    it('counts a refund of a capture on its pre-authorisation too', async () => {
      const preAuth = await settled('PreAuth', 8000, { capturedIsoAmount: 8000 });
      const capture = await capturedEarlier(preAuth, 8000);
      await execute('Refund', capture.id, 5000);
      expect((await reload(capture.id)).refundedIsoAmount).toBe(5000);
      expect((await reload(preAuth.id)).refundedIsoAmount).toBe(5000);
      expect(await refusal(execute('Refund', preAuth.id, 3100))).toMatchObject({ code: 'BYRD231' });
    });

    it('leaves alone the money open or lost chargebacks hold, but not what a won one gave back', async () => {
      const payment = await settled('Payment', 8000);
      await chargeback(payment, 2000, { status: 'Created', resolution: null });
      await chargeback(payment, 1000, { status: 'Lost', resolution: 'Lost' });
      await chargeback(payment, 4000, { status: 'Won', resolution: 'Won' });
      expect(await refusal(execute('Refund', payment.id, 5100))).toMatchObject({
        code: 'BYRD231',
        message: 'The refund amount exceeds the remaining balance (5000 minor units)',
      });
      expect(await execute('Refund', payment.id, 5000)).toMatchObject({ status: 'Success' });
    });

    it('refuses a refund of a pre-authorisation whose captures are charged back (BYRD230)', async () => {
      const preAuth = await settled('PreAuth', 8000, { capturedIsoAmount: 8000 });
      const capture = await capturedEarlier(preAuth, 8000);
      await chargeback(capture, 8000, { status: 'Disputing', resolution: null });
      expect(await refusal(execute('Refund', preAuth.id))).toMatchObject({
        code: 'BYRD230',
        message: 'The payment is already fully refunded or charged back',
      });
      expect(await refusal(execute('Refund', capture.id))).toMatchObject({ code: 'BYRD230' });
    });
  });

  it("answers 404 for another merchant's transaction or an id that is no GUID", async () => {
    const preAuth = await settled('PreAuth', 5000);
    const otherMerchant = { ...merchant(), merchantId: `merchant-${randomUUID()}` };
    const theirs = run.execute(otherMerchant, 'Capture', preAuth.id, {}, randomUUID());
    expect(await refusal(theirs)).toMatchObject({ kind: ErrorKind.NotFound });
    expect(await refusal(execute('Capture', 'not-a-guid'))).toMatchObject({ kind: ErrorKind.NotFound });
  });
});
