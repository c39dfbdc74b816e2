import { randomUUID } from 'node:crypto';
import { OutboxMessage } from '@byrd/platform';
import type { AsyncPaymentProvider } from '../src/async/async-payment-provider.js';
import { CreateAsyncPayment } from '../src/async/create-async-payment.usecase.js';
import { OpenAttempts } from '../src/async/open-attempts.js';
import { SandboxAsyncPaymentProvider } from '../src/async/sandbox-async-provider.js';
import { SettleAsyncPayment } from '../src/async/settle-async-payment.usecase.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { PayerResolver } from '../src/payments-core/payer.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

/**
 * CreateAsyncPayment on a real PostgreSQL (medium tier), with a processor that fails the MB WAY
 * request: what the payment and its events say afterwards. Payments of no order, so no RPC is made.
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
      new OpenAttempts(medium.dataSource, events, new SandboxAsyncPaymentProvider()),
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

  const createWith = (provider: AsyncPaymentProvider) =>
    new CreateAsyncPayment(medium.dataSource, new PayerResolver(medium.rpc()), events, provider).execute(
      { merchant },
      {
        type: 'mbway',
        amount: '25.00',
        currency: 'EUR',
        orderRef: 'mbway-medium',
        mbway: { phoneNumber: '912345678' },
      },
      randomUUID(),
    );

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
});
