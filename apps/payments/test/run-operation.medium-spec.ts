import { randomUUID } from 'node:crypto';
import { ApiError, ErrorKind, OutboxMessage } from '@byrd/platform';
import { acquirerResult, type FollowUpRequest } from '../src/acquirer/acquirer.js';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { ChargebackRepository } from '../src/chargebacks/chargeback.repository.js';
import type { FollowUpOperation } from '../src/operations/operation-rules.js';
import { RunOperation } from '../src/operations/run-operation.usecase.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

/**
 * RunOperation on a real PostgreSQL with the payments migrations (medium tier): the balance rules of
 * capture, refund and release, as the repositories read and write them, with the sandbox acquirer's
 * amount rules deciding (capture: 20.00 and below denied; refund: 30.00 and below denied). Transactions
 * belong to no order, so no order lock is asked for; events stay in the outbox (relay off).
 */
describe('RunOperation (medium)', () => {
  let medium: PaymentsMedium;
  let run: RunOperation;
  let merchantId: string;

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    run = new RunOperation(
      medium.dataSource,
      medium.transactions,
      new ChargebackRepository(),
      new TransactionEventRecorder(medium.outbox()),
      new OrderLock(medium.rpc()),
      new SandboxAcquirer(medium.dataSource, medium.config),
      medium.config,
    );
  });

  afterAll(() => medium?.close());

  beforeEach(() => {
    merchantId = `merchant-${randomUUID()}`;
  });

  const merchant = () => ({ merchantId, merchantName: 'Medium', mode: 'sandbox' as const, scopes: [] });
  const settled = (operationType: 'Payment' | 'PreAuth', isoAmount: number, balances = {}) =>
    medium.settled(merchantId, operationType, isoAmount, balances);
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

  const operationsOn = (sourceId: string) =>
    medium.dataSource.getRepository(Transaction).findBy({ sourceTransactionId: sourceId });
  const eventsOf = async (transactionId: string) =>
    (await medium.dataSource.getRepository(OutboxMessage).find())
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
      expect((await medium.reload(preAuth.id)).capturedIsoAmount).toBe(3000);
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
      expect((await medium.reload(preAuth.id)).capturedIsoAmount).toBe(0);
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
      expect((await medium.reload(preAuth.id)).capturedIsoAmount).toBe(4000);
    });
  });

  describe('release', () => {
    it('releases what an uncaptured pre-authorisation holds', async () => {
      const preAuth = await settled('PreAuth', 5000);
      const answer = await execute('Release', preAuth.id);
      expect(answer).toMatchObject({ status: 'Success', isoAmount: 5000 });
      expect((await medium.reload(preAuth.id)).releasedIsoAmount).toBe(5000);
      expect(await refusal(execute('Release', preAuth.id))).toMatchObject({
        code: 'BYRD205',
        message: 'The pre-authorisation was already released',
      });
    });

    it("announces a partial release as the pre-authorisation's success, the release of the rest as its cancellation", async () => {
      // The pre-auth still holds the rest after a partial release: merchants (and the hosted form)
      // must not hear that it was canceled.
      const preAuth = await settled('PreAuth', 5000);
      const part = await execute('Release', preAuth.id, 2000);
      expect(part).toMatchObject({ status: 'Success', sourceTransaction: { isoRemainingAmount: 3000 } });
      expect(await eventsOf(part.transactionId)).toEqual(['transaction.preauth.success']);

      const rest = await execute('Release', preAuth.id);
      expect(rest).toMatchObject({ status: 'Success', isoAmount: 3000 });
      expect(await eventsOf(rest.transactionId)).toEqual(['transaction.preauth.canceled']);
    });

    it('refuses to release a captured pre-authorisation', async () => {
      const preAuth = await settled('PreAuth', 5000, { capturedIsoAmount: 3000 });
      expect(await refusal(execute('Release', preAuth.id))).toMatchObject({
        code: 'BYRD205',
        message: 'A captured pre-authorisation cannot be released; refund it instead',
      });
    });
  });

  describe('release racing a capture of the same pre-authorisation', () => {
    /** The sandbox acquirer, holding the next follow-up of a kind (`gate`) until the test lets it answer. */
    class GatedAcquirer extends SandboxAcquirer {
      private readonly arrived = new Map<string, () => void>();
      private readonly gates = new Map<string, Promise<void>>();
      private readonly open = new Map<string, () => void>();
      reached(operation: string): Promise<void> {
        return new Promise<void>((resolve) => this.arrived.set(operation, resolve));
      }
      gate(operation: string): void {
        this.gates.set(operation, new Promise<void>((resolve) => this.open.set(operation, resolve)));
      }
      answer(operation: string): void {
        this.open.get(operation)?.();
      }
      override async followUp(request: Parameters<SandboxAcquirer['followUp']>[0]) {
        this.arrived.get(request.operation)?.();
        const gate = this.gates.get(request.operation);
        this.gates.delete(request.operation);
        await gate;
        return super.followUp(request);
      }
    }
    /** Records the orders payments asks to unlock (the RPC to orders, here not sent). */
    class RecordingOrderLock extends OrderLock {
      readonly unlocked: string[] = [];
      override async release(transaction: Transaction): Promise<void> {
        this.unlocked.push(transaction.id);
      }
    }

    /** RunOperation on the gated acquirer, recording the unlocks it asks for. */
    function gatedRun() {
      const acquirer = new GatedAcquirer(medium.dataSource, medium.config);
      const orderLock = new RecordingOrderLock(medium.rpc());
      const gated = new RunOperation(
        medium.dataSource,
        medium.transactions,
        new ChargebackRepository(),
        new TransactionEventRecorder(medium.outbox()),
        orderLock,
        acquirer,
        medium.config,
      );
      return { acquirer, orderLock, gated };
    }

    it('unlocks the order only once nothing is captured and every release has settled', async () => {
      const { acquirer, orderLock, gated } = gatedRun();
      const runGated = (operation: FollowUpOperation, sourceId: string, isoAmount: number) =>
        gated.execute(merchant(), operation, sourceId, { isoAmount }, randomUUID());
      const preAuth = await settled('PreAuth', 5000);
      await medium.dataSource
        .getRepository(Transaction)
        .update({ id: preAuth.id }, { orderId: randomUUID() });

      // A release of 30.00 waits at the acquirer; meanwhile a capture of the 20.00 it leaves.
      acquirer.gate('Release');
      acquirer.gate('Capture');
      const releaseAtAcquirer = acquirer.reached('Release');
      const release = runGated('Release', preAuth.id, 3000);
      await releaseAtAcquirer;
      const captureAtAcquirer = acquirer.reached('Capture');
      const capture = runGated('Capture', preAuth.id, 2000);
      await captureAtAcquirer;

      acquirer.answer('Release');
      expect(await release).toMatchObject({ status: 'Success' });
      // 20.00 is reserved by the capture: the pre-authorisation may still take money.
      expect(orderLock.unlocked).toEqual([]);

      acquirer.answer('Capture'); // the sandbox denies captures of 20.00 and below
      expect(await capture).toMatchObject({ status: 'Denied' });
      expect(orderLock.unlocked).toEqual([]); // the 20.00 is held again

      expect(await runGated('Release', preAuth.id, 2000)).toMatchObject({ status: 'Success' });
      expect(orderLock.unlocked).toEqual([preAuth.id]);
    });

    it('does not unlock while another release of it is still at the acquirer', async () => {
      const { acquirer, orderLock, gated } = gatedRun();
      const preAuth = await settled('PreAuth', 5000);
      await medium.dataSource
        .getRepository(Transaction)
        .update({ id: preAuth.id }, { orderId: randomUUID() });
      acquirer.gate('Release');
      const firstAtAcquirer = acquirer.reached('Release');
      const first = gated.execute(merchant(), 'Release', preAuth.id, { isoAmount: 3000 }, randomUUID());
      await firstAtAcquirer; // held there; the next release goes straight through
      const second = await gated.execute(
        merchant(),
        'Release',
        preAuth.id,
        { isoAmount: 2000 },
        randomUUID(),
      );
      expect(second).toMatchObject({ status: 'Success' });
      expect(orderLock.unlocked).toEqual([]);
      acquirer.answer('Release');
      expect(await first).toMatchObject({ status: 'Success' });
      expect(orderLock.unlocked).toEqual([preAuth.id]);
    });

    it('refuses a capture while a release of all of it is at the acquirer as retryable, not final', async () => {
      // The release may yet be declined and hand the money back: a final refusal kept under the
      // capture's idempotency-key would refuse its retry for good.
      const { acquirer, gated } = gatedRun();
      const preAuth = await settled('PreAuth', 5000);
      acquirer.gate('Release');
      const releaseAtAcquirer = acquirer.reached('Release');
      const release = gated.execute(merchant(), 'Release', preAuth.id, {}, randomUUID());
      await releaseAtAcquirer;

      expect(await refusal(execute('Capture', preAuth.id, 2500))).toMatchObject({
        code: 'BYRD205',
        retryAfter: 5,
      });
      acquirer.answer('Release');
      expect(await release).toMatchObject({ status: 'Success' });
      // Settled: now the refusal is final.
      const settledRefusal = await refusal(execute('Capture', preAuth.id, 2500));
      expect(settledRefusal).toMatchObject({ code: 'BYRD205' });
      expect(settledRefusal.retryAfter).toBeUndefined();
    });

    it('refuses a release while a capture is at the acquirer as retryable; once it is denied, releases', async () => {
      const { acquirer, gated } = gatedRun();
      const preAuth = await settled('PreAuth', 5000);
      acquirer.gate('Capture');
      const captureAtAcquirer = acquirer.reached('Capture');
      const capture = gated.execute(merchant(), 'Capture', preAuth.id, { isoAmount: 1500 }, randomUUID());
      await captureAtAcquirer;

      expect(await refusal(execute('Release', preAuth.id))).toMatchObject({ code: 'BYRD205', retryAfter: 5 });
      acquirer.answer('Capture'); // the sandbox denies captures of 20.00 and below
      expect(await capture).toMatchObject({ status: 'Denied' });
      expect(await execute('Release', preAuth.id)).toMatchObject({ status: 'Success', isoAmount: 5000 });
    });
  });

  describe('an operation whose acquirer answer was lost (TemporaryFailed)', () => {
    /** What the recovery does once the acquirer says what it recorded. */
    const recover = async (transactionId: string) =>
      run.finish(await medium.reload(transactionId), acquirerResult('Success'));

    it('announces a refund that timed out as pending, never as an error, then its success', async () => {
      // A merchant told "error" would refund again under a new key: twice the money back.
      const payment = await settled('Payment', 10_000);
      const refund = await execute('Refund', payment.id, 3001); // the sandbox times out at 30.01
      expect(refund).toMatchObject({ status: 'TemporaryFailed', code: 'BYRD203' });
      expect(await eventsOf(refund.transactionId)).toEqual(['transaction.refund.pending']);

      await recover(refund.transactionId);
      expect(await eventsOf(refund.transactionId)).toEqual([
        'transaction.refund.pending',
        'transaction.refund.success',
      ]);
    });

    it('announces a capture that timed out as pending, then its success', async () => {
      const preAuth = await settled('PreAuth', 10_000);
      const capture = await execute('Capture', preAuth.id, 2001); // the sandbox times out at 20.01
      expect(capture).toMatchObject({ status: 'TemporaryFailed' });
      expect(await eventsOf(capture.transactionId)).toEqual(['transaction.capture.pending']);
      await recover(capture.transactionId);
      expect(await eventsOf(capture.transactionId)).toEqual([
        'transaction.capture.pending',
        'transaction.capture.success',
      ]);
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
      expect((await medium.reload(payment.id)).refundedIsoAmount).toBe(4000);
    });

    it('counts a refund of a capture on its pre-authorisation too', async () => {
      const preAuth = await settled('PreAuth', 8000, { capturedIsoAmount: 8000 });
      const capture = await medium.capturedEarlier(preAuth, 8000);
      await execute('Refund', capture.id, 5000);
      expect((await medium.reload(capture.id)).refundedIsoAmount).toBe(5000);
      expect((await medium.reload(preAuth.id)).refundedIsoAmount).toBe(5000);
      expect(await refusal(execute('Refund', preAuth.id, 3100))).toMatchObject({ code: 'BYRD231' });
    });

    it("answers a capture's refund with what is really left: the pre-authorisation's own refunds count", async () => {
      // 200.00 captured in two captures; 120.00 refunded on the pre-auth itself leaves 80.00 for both.
      const preAuth = await settled('PreAuth', 20_000, { capturedIsoAmount: 20_000 });
      const capture = await medium.capturedEarlier(preAuth, 10_000);
      await medium.capturedEarlier(preAuth, 10_000);
      await execute('Refund', preAuth.id, 12_000);

      const first = await execute('Refund', capture.id, 3500);
      expect(first).toMatchObject({
        status: 'Success',
        sourceTransaction: { isoRefundedAmount: 3500, isoRemainingAmount: 4500, remainingAmount: '45.00' },
      });
      // The remainder advertised can be refunded (not the 65.00 the capture alone would allow).
      expect(await execute('Refund', capture.id, first.sourceTransaction.isoRemainingAmount)).toMatchObject({
        status: 'Success',
        sourceTransaction: { isoRemainingAmount: 0 },
      });
    });

    it('answers a refund of a pre-authorisation with what is left without its captures in flight', async () => {
      const preAuth = await settled('PreAuth', 20_000, { capturedIsoAmount: 15_000 });
      await medium.capturedEarlier(preAuth, 10_000);
      await medium.captureInFlight(preAuth, 5000);
      const refund = await execute('Refund', preAuth.id, 4000);
      expect(refund.sourceTransaction.isoRemainingAmount).toBe(6000);
      expect(await execute('Refund', preAuth.id, 6000)).toMatchObject({ status: 'Success' });
    });

    it('refunds of a pre-authorisation only what its settled captures took, not captures in flight', async () => {
      // A capture reserves its amount before the acquirer answers; should it then fail (or be voided
      // by the recovery), that money was never taken, so refunding it would pay out money never had.
      const preAuth = await settled('PreAuth', 10_000, { capturedIsoAmount: 5500 });
      await medium.capturedEarlier(preAuth, 4000);
      await medium.captureInFlight(preAuth, 1500);
      expect(await refusal(execute('Refund', preAuth.id, 5501))).toMatchObject({
        code: 'BYRD231',
        message: 'The refund amount exceeds the remaining balance (4000 minor units)',
      });
      expect(await execute('Refund', preAuth.id)).toMatchObject({ status: 'Success', isoAmount: 4000 });

      const waiting = await settled('PreAuth', 10_000, { capturedIsoAmount: 5000 });
      await medium.captureInFlight(waiting, 5000);
      expect(await refusal(execute('Refund', waiting.id))).toMatchObject({
        code: 'BYRD205',
        message:
          'The captures of this pre-authorisation are still waiting for the acquirer; refund once they are settled',
      });
      expect(await operationsOn(waiting.id)).toHaveLength(1);
    });

    it('refuses as not yet, not as final, a refund a capture still at the acquirer may make room for', async () => {
      // A capture whose answer was lost (the acquirer took it): the recovery settles it later. A refund
      // refused meanwhile as final (BYRD231, BYRD230) would be kept under its idempotency-key for a day.
      const preAuth = await settled('PreAuth', 20_000, { capturedIsoAmount: 15_000 });
      await medium.capturedEarlier(preAuth, 10_000);
      const lost = await medium.captureInFlight(preAuth, 5000);
      const notYet = {
        code: 'BYRD205',
        retryAfter: 5,
        message:
          'A capture of this pre-authorisation is still waiting for the acquirer; refund once it is settled',
      };
      expect(await refusal(execute('Refund', preAuth.id, 15_000))).toMatchObject(notYet);
      expect(await refusal(execute('Refund', preAuth.id, 15_001))).toMatchObject({ code: 'BYRD231' });
      expect(await execute('Refund', preAuth.id)).toMatchObject({ status: 'Success', isoAmount: 10_000 });
      expect(await refusal(execute('Refund', preAuth.id))).toMatchObject(notYet);

      await run.finish(await medium.reload(lost.id), acquirerResult('Success'));
      expect(await execute('Refund', preAuth.id, 5000)).toMatchObject({ status: 'Success' });
      expect(await refusal(execute('Refund', preAuth.id))).toMatchObject({ code: 'BYRD230' });
    });

    it("answers what is left with the refund's amount still held when the recovery took it over mid-call", async () => {
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      let asked!: () => void;
      const askedAcquirer = new Promise<void>((resolve) => (asked = resolve));
      const slowAcquirer = new (class extends SandboxAcquirer {
        override async followUp(request: FollowUpRequest) {
          asked();
          await answered;
          return super.followUp(request);
        }
      })(medium.dataSource, medium.config);
      const slow = new RunOperation(
        medium.dataSource,
        medium.transactions,
        new ChargebackRepository(),
        new TransactionEventRecorder(medium.outbox()),
        new OrderLock(medium.rpc()),
        slowAcquirer,
        medium.config,
      );
      const payment = await settled('Payment', 10_000);
      const refunding = slow.execute(merchant(), 'Refund', payment.id, { isoAmount: 4000 }, randomUUID());
      await askedAcquirer;
      // The recovery claims the call (as claimCallsInFlight does) before the acquirer answers.
      const [refund] = await operationsOn(payment.id);
      await medium.dataSource.query(
        `UPDATE transactions SET acquirer_pending_since = now() + interval '1 second' WHERE id = $1`,
        [refund.id],
      );
      answer();
      const refunded = await refunding;
      expect(refunded.status).toBe('Processing');
      // The 40.00 stays held until the recovery settles it: 60.00 can be refunded, not 100.00.
      expect(refunded.sourceTransaction.isoRemainingAmount).toBe(6000);
      expect(await refusal(execute('Refund', payment.id, 6001))).toMatchObject({ code: 'BYRD231' });
    });

    it('leaves alone the money open or lost chargebacks hold, but not what a won one gave back', async () => {
      const payment = await settled('Payment', 8000);
      await medium.chargeback(payment, 2000, { status: 'Created', resolution: null });
      await medium.chargeback(payment, 1000, { status: 'Lost', resolution: 'Lost' });
      await medium.chargeback(payment, 4000, { status: 'Won', resolution: 'Won' });
      expect(await refusal(execute('Refund', payment.id, 5100))).toMatchObject({
        code: 'BYRD231',
        message: 'The refund amount exceeds the remaining balance (5000 minor units)',
      });
      expect(await execute('Refund', payment.id, 5000)).toMatchObject({ status: 'Success' });
    });

    it('refuses a refund of a pre-authorisation whose captures are charged back (BYRD230)', async () => {
      const preAuth = await settled('PreAuth', 8000, { capturedIsoAmount: 8000 });
      const capture = await medium.capturedEarlier(preAuth, 8000);
      await medium.chargeback(capture, 8000, { status: 'Disputing', resolution: null });
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

  describe('a retry with the idempotency-key of a request that committed its operation', () => {
    const withKey = (operation: FollowUpOperation, sourceId: string, key: string, isoAmount?: number) =>
      run.execute(
        merchant(),
        operation,
        sourceId,
        isoAmount === undefined ? {} : { isoAmount },
        randomUUID(),
        key,
      );

    it('ten at once with one key, and no stored answer between them: one refund, every answer its own', async () => {
      const payment = await settled('Payment', 10000);
      const key = `refund-${randomUUID()}`;
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => withKey('Refund', payment.id, key, 3500)),
      );
      const refunds = await operationsOn(payment.id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ idempotencyKey: key, status: 'Success' });
      for (const answer of answers) expect(answer.transactionId).toBe(refunds[0].id);
      expect((await medium.reload(payment.id)).refundedIsoAmount).toBe(3500);
    });

    it('one that moved nothing (declined) is tried again; another amount under the key is refused', async () => {
      const payment = await settled('Payment', 10000);
      const declinedKey = `refund-${randomUUID()}`;
      const declined = await withKey('Refund', payment.id, declinedKey, 3000);
      expect(declined.status).toBe('Denied');
      const again = await withKey('Refund', payment.id, declinedKey, 3000);
      expect(again.transactionId).not.toBe(declined.transactionId);

      const key = `refund-${randomUUID()}`;
      expect((await withKey('Refund', payment.id, key, 3500)).status).toBe('Success');
      expect(await refusal(withKey('Refund', payment.id, key, 4000))).toMatchObject({ code: 'BYRD900' });
      expect(await operationsOn(payment.id)).toHaveLength(3);
      expect((await medium.reload(payment.id)).refundedIsoAmount).toBe(3500);
    });
  });
});
