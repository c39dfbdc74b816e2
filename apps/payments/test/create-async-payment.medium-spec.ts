import { randomUUID } from 'node:crypto';
import { OutboxMessage, Refusal, type ApiError } from '@byrd/platform';
import type { CreatePaymentRequest } from '@byrd/contracts';
import type { AsyncPaymentProvider } from '../src/async/async-payment-provider.js';
import { CreateAsyncPayment } from '../src/async/create-async-payment.usecase.js';
import { EndLapsedAttempts } from '../src/async/end-lapsed-attempts.sweep.js';
import { OpenAttempts } from '../src/async/open-attempts.js';
import { SandboxAsyncPaymentProvider } from '../src/async/sandbox-async-provider.js';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { ChargebackRepository } from '../src/chargebacks/chargeback.repository.js';
import { RunOperation } from '../src/operations/run-operation.usecase.js';
import { SettleAsyncPayment } from '../src/async/settle-async-payment.usecase.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { PayerResolver, type Payer, type PaymentActor } from '../src/payments-core/payer.js';
import type { PaymentsConfig } from '../src/config.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

/**
 * CreateAsyncPayment, SettleAsyncPayment and OpenAttempts on a real PostgreSQL (medium tier), with a
 * processor that fails (the MB WAY request, a void): what the payment and its events say afterwards.
 * No RPC is made: payments of no order, or an order whose lock is kept here as orders keeps it.
 */
describe('CreateAsyncPayment (medium)', () => {
  let medium: PaymentsMedium;
  let events: TransactionEventRecorder;
  let settle: SettleAsyncPayment;
  const merchantId = `merchant-${randomUUID()}`;
  const merchant = { merchantId, merchantName: 'Medium', mode: 'sandbox' as const, scopes: [] };

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    events = new TransactionEventRecorder(medium.outbox());
    const orderLock = new OrderLock(medium.rpc());
    settle = new SettleAsyncPayment(
      medium.dataSource,
      events,
      orderLock,
      new OpenAttempts(medium.dataSource, events, new SandboxAsyncPaymentProvider(), medium.config),
    );
  });

  afterAll(() => medium?.close());

  /** A processor whose MB WAY request fails after `before` ran (the push may have gone out). */
  function failingProcessor(before: (transactionId: string) => Promise<void>): AsyncPaymentProvider {
    const sandbox = new SandboxAsyncPaymentProvider();
    return Object.assign(Object.create(sandbox) as AsyncPaymentProvider, {
      async requestMbWay({ transactionId }: { transactionId: string }) {
        await before(transactionId);
        throw new Error('processor answer lost');
      },
    });
  }

  const createWith = (
    provider: AsyncPaymentProvider,
    {
      key,
      payer = medium.payer(),
      phoneNumber = '912345678',
      config = medium.config,
      amount = '25.00',
    }: {
      key?: string;
      payer?: PayerResolver;
      phoneNumber?: string;
      config?: PaymentsConfig;
      amount?: string;
    } = {},
  ) =>
    new CreateAsyncPayment(
      medium.dataSource,
      payer,
      events,
      provider,
      new OpenAttempts(medium.dataSource, events, provider, medium.config),
      config,
    ).execute(
      { merchant },
      {
        type: 'mbway',
        amount,
        currency: 'EUR',
        orderRef: 'mbway-medium',
        mbway: { phoneNumber },
      },
      randomUUID(),
      key,
    );

  /** The automatic refunds of a payment: the refund rows pointing at it. */
  const refundsOf = (paymentId: string) =>
    medium.dataSource
      .getRepository(Transaction)
      .findBy({ sourceTransactionId: paymentId, operationType: 'Refund' });

  const subjectsOf = async (transactionId: string) =>
    (await medium.dataSource.getRepository(OutboxMessage).find({ order: { seq: 'ASC' } }))
      .filter(
        (row) => (row.payload as { data?: { transactionId?: string } }).data?.transactionId === transactionId,
      )
      .map((row) => row.subject.replace(/^.*?transaction\./, 'transaction.'));

  it('ends a pending MB WAY payment in Error when the request to the phone fails', async () => {
    let paymentId = '';
    const failed = createWith(
      failingProcessor(async (id) => {
        paymentId = id;
      }),
    );
    await expect(failed).rejects.toThrow('processor answer lost');
    expect((await medium.reload(paymentId)).status).toBe('Error');
    expect(await subjectsOf(paymentId)).toEqual(['transaction.payment.pending', 'transaction.payment.error']);
  });

  it('ends an MB WAY payment in Error when the processor never answers the request, without holding the caller', async () => {
    let paymentId = '';
    const silent = Object.assign(Object.create(new SandboxAsyncPaymentProvider()) as AsyncPaymentProvider, {
      requestMbWay({ transactionId }: { transactionId: string }) {
        paymentId = transactionId;
        return new Promise<void>(() => undefined); // the processor hangs
      },
    });
    const started = Date.now();
    await expect(
      createWith(silent, { config: { ...medium.config, ACQUIRER_TIMEOUT_MS: 300 } }),
    ).rejects.toThrow('no answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await medium.reload(paymentId)).status).toBe('Error');
    expect(await subjectsOf(paymentId)).toEqual(['transaction.payment.pending', 'transaction.payment.error']);
  });

  it('keeps the Success of a shopper who paid before the failed request answered', async () => {
    let paymentId = '';
    const answer = await createWith(
      failingProcessor(async (id) => {
        paymentId = id;
        await settle.execute(merchantId, id, 'pay');
      }),
    );
    expect(answer).toMatchObject({ transactionId: paymentId, status: 'Success' });
    const stored: Transaction = await medium.reload(paymentId);
    expect(stored.status).toBe('Success');
    expect(await subjectsOf(paymentId)).toEqual([
      'transaction.payment.pending',
      'transaction.payment.success',
    ]);
  });

  it('refunds at once the money of an MB WAY push whose answer was lost, when the shopper pays it', async () => {
    let paymentId = '';
    const lost = createWith(
      failingProcessor(async (id) => {
        paymentId = id;
      }),
    );
    await expect(lost).rejects.toThrow('processor answer lost');
    // The push did reach the phone: the shopper accepts it and the processor notifies the payment.
    const settled = await settle.execute(merchantId, paymentId, 'pay');

    expect(settled).toMatchObject({ transactionId: paymentId, status: 'Success', code: 'BYRD200' });
    expect(await medium.reload(paymentId)).toMatchObject({ status: 'Success', refundedIsoAmount: 2500 });
    const [refund, ...more] = await refundsOf(paymentId);
    expect(more).toEqual([]);
    expect(refund).toMatchObject({ status: 'Success', isoAmount: 2500, idempotencyKey: null });
    expect(await subjectsOf(paymentId)).toEqual([
      'transaction.payment.pending',
      'transaction.payment.error',
      'transaction.payment.success',
    ]);
    expect(await subjectsOf(refund.id)).toEqual(['transaction.refund.success']);
  });

  it('tries a retry of an MB WAY payment refunded at once anew: never answered Success for money handed back', async () => {
    // The push's answer was lost (500, the key freed), the shopper paid it anyway: recorded Success
    // and refunded at once. The merchant's retry with the same key must push again.
    const key = `key-${randomUUID()}`;
    let paymentId = '';
    const lost = createWith(
      failingProcessor(async (id) => {
        paymentId = id;
      }),
      { key },
    );
    await expect(lost).rejects.toThrow('processor answer lost');
    await settle.execute(merchantId, paymentId, 'pay');
    expect(await medium.reload(paymentId)).toMatchObject({
      status: 'Success',
      refundedIsoAmount: 2500,
      refundedAtOnce: true,
    });
    const retried = await createWith(new SandboxAsyncPaymentProvider(), { key });
    expect(retried.transactionId).not.toBe(paymentId);
    expect(retried).toMatchObject({ status: 'Processing', code: 'BYRD201' });
    // And the retry of that one is answered with it, as before.
    const again = await createWith(new SandboxAsyncPaymentProvider(), { key });
    expect(again.transactionId).toBe(retried.transactionId);
  });

  it.each(['refuse', 'expire'] as const)(
    'still refuses a payment notified after the processor itself ended it (%s)',
    async (action) => {
      const { transactionId } = await createWith(new SandboxAsyncPaymentProvider());
      await settle.execute(merchantId, transactionId, action);
      await expect(settle.execute(merchantId, transactionId, 'pay')).rejects.toThrow('no longer pending');
      expect(await refundsOf(transactionId)).toEqual([]);
    },
  );

  describe('an open attempt of an order paid another way', () => {
    /** The order's side of its lock as orders keeps it: one holder per order. */
    class OrdersLock extends OrderLock {
      private readonly holders = new Map<string, string>();
      override async take(transaction: Transaction): Promise<ApiError | null> {
        const { orderId, id } = transaction;
        if (!orderId) return null;
        const holder = this.holders.get(orderId);
        if (holder && holder !== id) return Refusal.notAllowed(`Order ${orderId} is held by ${holder}`);
        this.holders.set(orderId, id);
        return null;
      }
      override async release({ orderId, id }: Transaction): Promise<void> {
        if (orderId && this.holders.get(orderId) === id) this.holders.delete(orderId);
      }
    }

    it('stays pending when the processor could not void it, and its payment is then refunded at once', async () => {
      const orderId = randomUUID();
      const { transactionId } = await createWith(new SandboxAsyncPaymentProvider());
      await medium.dataSource.getRepository(Transaction).update({ id: transactionId }, { orderId });
      const card = await medium.settled(merchantId, 'Payment', 2500);
      await medium.dataSource.getRepository(Transaction).update({ id: card.id }, { orderId });
      card.orderId = orderId;
      const orderLock = new OrdersLock(medium.rpc());
      expect(await orderLock.take(card)).toBeNull(); // the card paid the order

      const unreachable = Object.assign(Object.create(new SandboxAsyncPaymentProvider()), {
        async cancel() {
          throw new Error('processor unreachable');
        },
      }) as AsyncPaymentProvider;
      const openAttempts = new OpenAttempts(medium.dataSource, events, unreachable, medium.config);
      await openAttempts.voidOthers(card);
      // The shopper still pays the reference the processor kept open.
      const settled = await new SettleAsyncPayment(
        medium.dataSource,
        events,
        orderLock,
        openAttempts,
      ).execute(merchantId, transactionId, 'pay');

      expect(settled).toMatchObject({ transactionId, status: 'Success' });
      expect(await medium.reload(transactionId)).toMatchObject({
        status: 'Success',
        refundedIsoAmount: 2500,
      });
      expect(await refundsOf(transactionId)).toMatchObject([{ status: 'Success', isoAmount: 2500 }]);
      // Never announced Canceled: the processor did not confirm the void.
      expect(await subjectsOf(transactionId)).toEqual([
        'transaction.payment.pending',
        'transaction.payment.success',
      ]);
    });
  });

  /** The sandbox processor, recording the payments whose MB WAY request it pushed to a phone. */
  function recordingPushes(): { pushed: string[]; processor: AsyncPaymentProvider } {
    const pushed: string[] = [];
    const processor = Object.assign(Object.create(new SandboxAsyncPaymentProvider()), {
      async requestMbWay({ transactionId }: { transactionId: string }) {
        pushed.push(transactionId);
      },
    }) as AsyncPaymentProvider;
    return { pushed, processor };
  }

  it('ends, once, MB WAY payments left waiting past their expiry (a push never sent, a void never recorded)', async () => {
    // What a kill between the commit and the push leaves is a payment waiting like any other: the
    // shopper was never asked, and no notice will ever come. Its expiry is the only clock left.
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const lapsedAt = async (expiresAt: Date) => {
      const { transactionId } = await createWith(new SandboxAsyncPaymentProvider());
      await medium.dataSource.getRepository(Transaction).update({ id: transactionId }, { expiresAt });
      return transactionId;
    };
    const lapsed = [await lapsedAt(minutesAgo(16)), await lapsedAt(minutesAgo(60))];
    const inGrace = await lapsedAt(minutesAgo(5)); // its expiry notice may still be on its way
    const waiting = await lapsedAt(new Date(Date.now() + 60_000));
    const voided: string[] = [];
    const processor = Object.assign(
      Object.create(new SandboxAsyncPaymentProvider()) as AsyncPaymentProvider,
      {
        async cancel(attempt: Transaction) {
          voided.push(attempt.id);
        },
      },
    );
    const sweep = () =>
      new EndLapsedAttempts(
        new OpenAttempts(medium.dataSource, events, processor, medium.config),
        medium.config,
      ).execute();

    // Two replicas sweeping at once: each payment is voided at the processor and announced once.
    const [first, second] = await Promise.all([sweep(), sweep()]);
    expect(first + second).toBe(2);
    for (const id of lapsed) {
      expect(await medium.reload(id)).toMatchObject({ status: 'Canceled', code: 'BYRD205' });
      expect(await subjectsOf(id)).toEqual(['transaction.payment.pending', 'transaction.payment.canceled']);
      expect(voided).toContain(id);
    }
    for (const id of [inGrace, waiting]) expect((await medium.reload(id)).status).toBe('Processing');
    expect(await sweep()).toBe(0);
  });

  it('never ends a refund of a lapsed MB WAY payment while the refund is at the acquirer', async () => {
    // A refund copies its payment's method and expiry, so the refund of an MB WAY payment paid an
    // hour ago is "Processing mbway, expired" while the acquirer has it. Only the acquirer's answer
    // (or the recovery) may end it: a sweep that canceled it would announce refund.canceled for
    // money that moves, and let a retry with the refund's key refund it again.
    const { transactionId: paymentId } = await createWith(new SandboxAsyncPaymentProvider(), {
      amount: '100.00',
    });
    await settle.execute(merchantId, paymentId, 'pay');
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await medium.dataSource.getRepository(Transaction).update({ id: paymentId }, { expiresAt: anHourAgo });
    const acquirer = new SandboxAcquirer(medium.dataSource, medium.config);
    let answered!: () => void;
    const atAcquirer = new Promise<void>((resolve) => (answered = resolve));
    let letAnswerThrough!: () => void;
    const held = new Promise<void>((resolve) => (letAnswerThrough = resolve));
    // The acquirer records the refund, and its answer is held on its way back (a slow network, or a
    // process about to be killed).
    const slowAnswer = Object.assign(Object.create(acquirer) as SandboxAcquirer, {
      async followUp(request: Parameters<SandboxAcquirer['followUp']>[0]) {
        const result = await acquirer.followUp(request);
        answered();
        await held;
        return result;
      },
    });
    const refunds = new RunOperation(
      medium.dataSource,
      medium.transactions,
      new ChargebackRepository(),
      events,
      new OrderLock(medium.rpc()),
      slowAnswer,
      medium.config,
    );
    const key = randomUUID();
    const refund = (run: RunOperation) =>
      run.execute(merchant, 'Refund', paymentId, { isoAmount: 4000 }, randomUUID(), key);
    const first = refund(refunds);
    await atAcquirer;
    const [inFlight] = await refundsOf(paymentId);
    expect(inFlight).toMatchObject({ status: 'Processing', paymentMethod: 'mbway' });
    expect(inFlight.expiresAt.getTime()).toBeLessThan(Date.now());

    const sweep = new EndLapsedAttempts(
      new OpenAttempts(medium.dataSource, events, new SandboxAsyncPaymentProvider(), medium.config),
      medium.config,
    );
    expect(await sweep.execute()).toBe(0);
    expect((await medium.reload(inFlight.id)).status).toBe('Processing');
    // The merchant's retry with the refund's key meets the refund in flight, not a second refund.
    const retried = await refund(refunds);
    expect(retried).toMatchObject({ transactionId: inFlight.id });

    letAnswerThrough();
    expect(await first).toMatchObject({ transactionId: inFlight.id, status: 'Success' });
    expect(await refundsOf(paymentId)).toHaveLength(1);
    expect(await medium.reload(paymentId)).toMatchObject({ refundedIsoAmount: 4000 });
    expect(await subjectsOf(inFlight.id)).toEqual(['transaction.refund.success']);
  });

  it('makes one MB WAY payment of an idempotency-key whose first request stalled past its lease', async () => {
    const key = randomUUID();
    const { pushed, processor } = recordingPushes();
    // The first request stalls right after finding no payment of its key, until the merchant's
    // retry (the key's lease ran out) has looked and found none either.
    let retryLooked!: () => void;
    const stalled = new Promise<void>((resolve) => (retryLooked = resolve));
    let resolved = 0;
    const payer = new (class extends PayerResolver {
      override async resolve(
        actor: PaymentActor,
        request: Pick<CreatePaymentRequest, 'orderId'>,
      ): Promise<Payer> {
        if (resolved++ === 0) await stalled;
        else retryLooked();
        return super.resolve(actor, request);
      }
    })(medium.rpc(), medium.dataSource, medium.merchants);

    const answers = await Promise.all([
      createWith(processor, { key, payer }),
      createWith(processor, { key, payer }),
    ]);

    const rows = await medium.dataSource
      .getRepository(Transaction)
      .findBy({ merchantId, idempotencyKey: key });
    expect(rows.map((row) => row.id)).toHaveLength(1);
    expect(pushed).toEqual([rows[0].id]);
    expect(answers.map((answer) => answer.transactionId)).toEqual([rows[0].id, rows[0].id]);
  });

  it('refuses (BYRD900) the stalled request of a key whose retry asked for another phone, pushing once', async () => {
    const key = randomUUID();
    const { pushed, processor } = recordingPushes();
    // The first request stalls right after finding no payment of its key; the merchant's retry (the
    // key's lease ran out), for another phone, looks after it and completes meanwhile.
    let firstLooked!: () => void;
    const looked = new Promise<void>((resolve) => (firstLooked = resolve));
    let retryDone!: () => void;
    const done = new Promise<void>((resolve) => (retryDone = resolve));
    const payer = new (class extends PayerResolver {
      override async resolve(
        actor: PaymentActor,
        request: Pick<CreatePaymentRequest, 'orderId'>,
      ): Promise<Payer> {
        if ((request as CreatePaymentRequest).mbway?.phoneNumber === '912345678') {
          firstLooked();
          await done;
        } else await looked;
        return super.resolve(actor, request);
      }
    })(medium.rpc(), medium.dataSource, medium.merchants);

    const stalled = createWith(processor, { key, payer });
    const retry = createWith(processor, { key, payer, phoneNumber: '961234567' }).finally(retryDone);
    const [stalledAnswer, retryAnswer] = await Promise.allSettled([stalled, retry]);

    const rows = await medium.dataSource
      .getRepository(Transaction)
      .findBy({ merchantId, idempotencyKey: key });
    expect(rows.map((row) => row.asyncDetails)).toEqual([{ phoneNumber: '961234567' }]);
    expect(pushed).toEqual([rows[0].id]);
    expect(retryAnswer).toMatchObject({ status: 'fulfilled', value: { transactionId: rows[0].id } });
    expect(stalledAnswer).toMatchObject({ status: 'rejected', reason: { code: 'BYRD900' } });
  });
});
