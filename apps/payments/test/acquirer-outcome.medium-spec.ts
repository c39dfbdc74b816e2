import { randomUUID } from 'node:crypto';
import { acquirerResult } from '../src/acquirer/acquirer.js';
import { markInFlight } from '../src/payments/payment-authorizer.js';
import { AcquirerOutcomeRecorder } from '../src/transactions/acquirer-outcome.recorder.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import type { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsMedium } from './medium.js';

/**
 * The acquirer's answers recorded on a real PostgreSQL (medium tier): answers arriving together are
 * written together (group commit), each still once, with exactly one event, and only while its
 * payment waits for it.
 */
describe('AcquirerOutcomeRecorder (medium)', () => {
  let medium: PaymentsMedium;
  let recorder: AcquirerOutcomeRecorder;

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    recorder = new AcquirerOutcomeRecorder(medium.dataSource, new TransactionEventRecorder(medium.outbox()));
  });
  afterAll(() => medium?.close());

  /** A payment committed in flight (write-ahead), as the acquirer is asked. */
  const inFlight = async (): Promise<Transaction> => {
    const transaction = await medium.settled(`merchant-${randomUUID()}`, 'Payment', 2500);
    markInFlight(transaction);
    await medium.dataSource.transaction((manager) => medium.transactions.saveOutcome(manager, transaction));
    return transaction;
  };
  const events = (transactionId: string) =>
    medium.dataSource.query<{ subject: string; xmin: string }[]>(
      `SELECT subject, xmin::text AS xmin FROM outbox WHERE payload -> 'data' ->> 'transactionId' = $1`,
      [transactionId],
    );
  /** Copies as separate requests hold them (each its own object, as loaded by its own request). */
  const copyOf = (transaction: Transaction): Transaction =>
    Object.assign(Object.create(Object.getPrototypeOf(transaction) as object) as Transaction, transaction);

  it('records answers arriving together in fewer statements, each with its one event', async () => {
    const payments = await Promise.all(Array.from({ length: 30 }, inFlight));
    const recorded = await Promise.all(
      payments.map((payment, i) => recorder.record(payment, acquirerResult(i % 3 ? 'Success' : 'Denied'))),
    );

    expect(recorded.every(Boolean)).toBe(true);
    const statements = new Set<string>();
    for (const [i, payment] of payments.entries()) {
      const stored = await medium.reload(payment.id);
      expect(stored).toMatchObject({ status: i % 3 ? 'Success' : 'Denied', acquirerPendingSince: null });
      const announced = await events(payment.id);
      expect(announced.map((e) => e.subject)).toEqual([
        i % 3 ? 'transaction.payment.success' : 'transaction.payment.failed',
      ]);
      statements.add(announced[0].xmin);
    }
    expect(statements.size).toBeLessThan(30);
  });

  it('of two answers for one payment at once, records the first only; the other reads it', async () => {
    const payments = await Promise.all(Array.from({ length: 10 }, inFlight));
    const [live, recovery] = [payments.map(copyOf), payments.map(copyOf)];
    const outcomes = await Promise.all([
      ...live.map((payment) => recorder.record(payment, acquirerResult('Success'))),
      ...recovery.map((payment) => recorder.record(payment, acquirerResult('Denied'))),
    ]);

    expect(outcomes).toEqual([...live.map(() => true), ...recovery.map(() => false)]);
    for (const [i, payment] of payments.entries()) {
      expect((await medium.reload(payment.id)).status).toBe('Success');
      expect(recovery[i].status).toBe('Success'); // the loser reloaded what was recorded
      expect(await events(payment.id)).toHaveLength(1);
    }
  });

  it('of two answers at once, records the one under the current claim even when a stale one came first', async () => {
    // A request stalled past its claim; the recovery claimed the payment again, asked the acquirer,
    // and both answers reach the recorder together, the stale one first.
    const payment = await inFlight();
    const stale = copyOf(payment);
    const reclaimed = new Date(payment.acquirerPendingSince!.getTime() + 60_000);
    await medium.dataSource.query(`UPDATE transactions SET acquirer_pending_since = $2 WHERE id = $1`, [
      payment.id,
      reclaimed,
    ]);
    const recovery = Object.assign(copyOf(payment), { acquirerPendingSince: reclaimed });

    const outcomes = await Promise.all([
      recorder.record(stale, acquirerResult('Denied')),
      recorder.record(recovery, acquirerResult('Success')),
    ]);

    expect(outcomes).toEqual([false, true]);
    expect(await medium.reload(payment.id)).toMatchObject({ status: 'Success', acquirerPendingSince: null });
    expect((await events(payment.id)).map((e) => e.subject)).toEqual(['transaction.payment.success']);
  });

  it('records nothing for a payment no longer waiting for its answer', async () => {
    const answered = await medium.settled(`merchant-${randomUUID()}`, 'Payment', 900);
    const stale = copyOf(answered);
    expect(await recorder.record(stale, acquirerResult('Denied'))).toBe(false);
    expect(stale.status).toBe('Success');
    expect(await events(answered.id)).toEqual([]);
  });
});
