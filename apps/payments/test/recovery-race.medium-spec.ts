import { randomUUID } from 'node:crypto';
import type { Acquirer, AcquirerResult } from '../src/acquirer/acquirer.js';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { OpenAttempts } from '../src/async/open-attempts.js';
import { SandboxAsyncPaymentProvider } from '../src/async/sandbox-async-provider.js';
import { ChargebackRepository } from '../src/chargebacks/chargeback.repository.js';
import { RunOperation } from '../src/operations/run-operation.usecase.js';
import { OrderLock } from '../src/payments-core/order-lock.js';
import { CardSaver } from '../src/payments/card-saver.js';
import { markInFlight, PaymentAuthorizer } from '../src/payments/payment-authorizer.js';
import { RecoverAcquirerCalls } from '../src/recovery/recover-acquirer-calls.js';
import { CardSeal } from '../src/cards/card-seal.js';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { AcquirerOutcomeRecorder } from '../src/transactions/acquirer-outcome.recorder.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

const CARD = { number: '5448280000000007', expiration: '12/40', cvv: '123', holder: 'Medium Test' };
const AN_HOUR_AGO = () => new Date(Date.now() - 3_600_000);

/**
 * The recovery and a slow live request settling the same acquirer call (medium tier, real sandbox
 * ledger): the recovery finds nothing at the acquirer, the live call lands there just after, the
 * recovery voids it, and only then does the live request come back with the acquirer's approval.
 * Our record must end as the acquirer's does (voided: no money), never Success over a reversed call.
 */
describe('the recovery racing a live acquirer call (medium)', () => {
  let medium: PaymentsMedium;
  let sandbox: SandboxAcquirer;
  let outcomes: AcquirerOutcomeRecorder;
  let operations: RunOperation;
  let recovery: RecoverAcquirerCalls;
  let authorizer: PaymentAuthorizer;
  /** Run by the acquirer the recovery talks to: just after its lookup, and just after its void. */
  const hooks: { afterLookup?: () => Promise<void>; afterVoid?: () => Promise<void> } = {};

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    const { dataSource, config } = medium;
    const events = new TransactionEventRecorder(medium.outbox());
    sandbox = new SandboxAcquirer(dataSource, config);
    const racing: Acquirer = Object.assign(Object.create(sandbox) as SandboxAcquirer, {
      async lookup(reference: string, mode: 'sandbox' | 'live') {
        const held = await sandbox.lookup(reference, mode);
        await hooks.afterLookup?.();
        return held;
      },
      async void(reference: string, mode: 'sandbox' | 'live') {
        await sandbox.void(reference, mode);
        await hooks.afterVoid?.();
      },
    });
    outcomes = new AcquirerOutcomeRecorder(dataSource, events);
    const orderLock = new OrderLock(medium.rpc());
    operations = new RunOperation(
      dataSource,
      medium.transactions,
      new ChargebackRepository(),
      events,
      orderLock,
      sandbox,
      config,
    );
    authorizer = new PaymentAuthorizer(
      dataSource,
      sandbox,
      config,
      outcomes,
      orderLock,
      new CardSaver(medium.rpc(), dataSource),
      new OpenAttempts(dataSource, events, new SandboxAsyncPaymentProvider(), config),
      medium.payer(),
      medium.transactions,
    );
    recovery = new RecoverAcquirerCalls(
      dataSource,
      medium.transactions,
      racing,
      config,
      outcomes,
      authorizer,
      operations,
    );
  });
  afterEach(() => {
    delete hooks.afterLookup;
    delete hooks.afterVoid;
  });
  afterAll(() => medium?.close());

  const eventsOf = (transactionId: string) =>
    medium.dataSource
      .query<{ subject: string }[]>(
        `SELECT subject FROM outbox WHERE payload -> 'data' ->> 'transactionId' = $1 ORDER BY seq`,
        [transactionId],
      )
      .then((rows) => rows.map((row) => row.subject));

  /** The live request's payment of 25.00 reaching the acquirer (late). */
  const paymentLands = (reference: string) =>
    sandbox.authorize({
      reference,
      merchantMode: 'sandbox',
      operation: 'Payment',
      isoAmount: 2500,
      currency: 'EUR',
      card: CARD,
    });

  it('never records a payment the recovery voided at the acquirer as Success', async () => {
    const live = medium.orderless(`merchant-${randomUUID()}`, 2500);
    markInFlight(live, AN_HOUR_AGO()); // written ahead, its acquirer call slow beyond the recovery's delay
    await medium.insert(live);

    let answer: AcquirerResult | undefined;
    let liveRecorded: boolean | undefined;
    hooks.afterLookup = async () => {
      answer = await paymentLands(live.id);
    };
    hooks.afterVoid = async () => {
      liveRecorded = await outcomes.record(live, answer!);
    };
    await recovery.execute();

    expect(answer?.outcome).toBe('Success'); // the acquirer did approve the live call, before the void
    expect(await sandbox.lookup(live.id, 'sandbox')).toMatchObject({ outcome: 'Denied' }); // then voided it
    expect(liveRecorded).toBe(false);
    expect(await medium.reload(live.id)).toMatchObject({ status: 'Error', acquirerPendingSince: null });
    expect(await eventsOf(live.id)).toEqual(['transaction.payment.error']);
  });

  it("sends an answered challenge's payment the acquirer never had, once, also when the live call lands meanwhile", async () => {
    // The challenge was answered and its payment written ahead; its request stalled (or died) before
    // the acquirer. Its card is still sealed on the session: the recovery sends it, not voids it.
    const live = medium.orderless(`merchant-${randomUUID()}`, 2500);
    live.brand = 'MASTER';
    markInFlight(live, AN_HOUR_AGO());
    await medium.insert(live);
    const sessionId = randomUUID();
    await medium.dataSource.getRepository(ThreeDSSession).save(
      Object.assign(new ThreeDSSession(), {
        id: sessionId,
        transactionId: live.id,
        merchantId: live.merchantId,
        status: 'Authorized',
        challengeRequired: true,
        acsTransId: randomUUID(),
        dsTransactionId: randomUUID(),
        protocolVersion: '2.2.0',
        transStatus: 'Y',
        eci: '02',
        aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
        challengeCompletedAt: AN_HOUR_AGO(),
        sealedCard: new CardSeal(medium.config.CARD_SEAL_KEY).seal(
          { number: CARD.number, expiration: CARD.expiration },
          sessionId,
        ),
        expiresAt: new Date(Date.now() + 600_000),
      }),
    );

    let answer: AcquirerResult | undefined;
    hooks.afterLookup = async () => {
      answer = await paymentLands(live.id); // the stalled request reaches the acquirer after all
    };
    await recovery.execute();

    expect(answer?.outcome).toBe('Success');
    expect(await sandbox.lookup(live.id, 'sandbox')).toMatchObject({ outcome: 'Success' }); // not voided
    const [{ n }] = await medium.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger WHERE reference = $1`,
      [live.id],
    );
    expect(n).toBe(1);
    expect(await medium.reload(live.id)).toMatchObject({ status: 'Success', acquirerPendingSince: null });
    expect(await outcomes.record(live, answer!)).toBe(false); // the stalled request's own record
    expect(await eventsOf(live.id)).toEqual(['transaction.payment.success']);
    const session = await medium.dataSource.getRepository(ThreeDSSession).findOneByOrFail({ id: sessionId });
    expect(session.sealedCard).toBeNull(); // kept only until the outcome was recorded
  });

  it('never lets a second recovery record Success for a call that a stalled one then voids', async () => {
    const live = medium.orderless(`merchant-${randomUUID()}`, 2500);
    markInFlight(live, AN_HOUR_AGO());
    await medium.insert(live);
    const timePasses = () =>
      medium.dataSource.query(
        `UPDATE transactions SET acquirer_pending_since = now() - interval '1 hour' WHERE id = $1`,
        [live.id],
      );

    let second: number | undefined;
    hooks.afterLookup = async () => {
      delete hooks.afterLookup; // the first recovery's lookup only, which found nothing
      // It stalls here: the live call lands at the acquirer, the recovery's delay passes, and another
      // replica's recovery runs.
      await paymentLands(live.id);
      await timePasses();
      second = await recovery.execute();
    };
    await recovery.execute(); // goes on to void the call
    await timePasses();
    await recovery.execute(); // a later sweep settles what the acquirer holds

    expect(second).toBe(0); // the call was being recovered: the second one left it alone
    expect(await sandbox.lookup(live.id, 'sandbox')).toMatchObject({ outcome: 'Denied' });
    expect(await medium.reload(live.id)).toMatchObject({ status: 'Denied', acquirerPendingSince: null });
    expect(await eventsOf(live.id)).toEqual(['transaction.payment.failed']);
  });

  it("a stalled request whose order could not be asked moves no recovery's claim, and marks no refusal under it", async () => {
    // An answered challenge's payment of an order, written ahead; its request stalled before the
    // order's lock, and the recovery claimed the row meanwhile (moving acquirer_pending_since).
    const stalled = medium.orderless(`merchant-${randomUUID()}`, 2500);
    stalled.orderId = randomUUID(); // no orders service answers here: the lock cannot be asked
    markInFlight(stalled, AN_HOUR_AGO());
    await medium.insert(stalled);
    const claimOf = async (id: string) =>
      (
        await medium.dataSource.query<{ claim: Date }[]>(
          `SELECT acquirer_pending_since AS claim FROM transactions WHERE id = $1`,
          [id],
        )
      )[0].claim;
    await medium.dataSource.query(`UPDATE transactions SET acquirer_pending_since = now() WHERE id = $1`, [
      stalled.id,
    ]);
    const recoveryClaim = await claimOf(stalled.id);
    const pending = { card: CARD, sealedOnSession: true };

    expect(await authorizer.authorize(stalled, pending)).toBeNull(); // left in flight
    expect(await claimOf(stalled.id)).toEqual(recoveryClaim); // the recovery's claim, not made due
    expect(await medium.transactions.markRefusedByOrder(stalled)).toBe(false);

    // The same payment under its own request's claim: made due for the recovery's next sweep.
    const own = await medium.reload(stalled.id);
    expect(await authorizer.authorize(own, pending)).toBeNull();
    const due = await claimOf(stalled.id);
    expect(Date.now() - due.getTime()).toBeGreaterThanOrEqual(medium.config.ACQUIRER_RECOVERY_AFTER_MS - 1_000);
    const now = await medium.reload(stalled.id);
    expect(now).toMatchObject({ status: 'Processing', refusedByOrder: false });
    expect(await medium.transactions.markRefusedByOrder(now)).toBe(true); // under its claim it may
    // Settled here, so that the other tests' sweeps do not take it.
    await medium.dataSource.query(
      `UPDATE transactions SET status = 'Error', acquirer_pending_since = NULL WHERE id = $1`,
      [stalled.id],
    );
  });

  it('never records a capture the recovery voided at the acquirer as Success', async () => {
    const preAuth = await medium.settled(`merchant-${randomUUID()}`, 'PreAuth', 5000, {
      capturedIsoAmount: 5000,
    });
    const live = await medium.capturedEarlier(preAuth, 5000, (capture) =>
      markInFlight(capture, AN_HOUR_AGO()),
    );

    let answer: AcquirerResult | undefined;
    hooks.afterLookup = async () => {
      answer = await sandbox.followUp({
        reference: live.id,
        sourceReference: preAuth.id,
        merchantMode: 'sandbox',
        operation: 'Capture',
        isoAmount: 5000,
        currency: 'EUR',
      });
    };
    hooks.afterVoid = async () => {
      await operations.finish(live, answer!);
    };
    await recovery.execute();

    expect(answer?.outcome).toBe('Success');
    expect(await sandbox.lookup(live.id, 'sandbox')).toMatchObject({ outcome: 'Denied' });
    expect(await medium.reload(live.id)).toMatchObject({ status: 'Error', acquirerPendingSince: null });
    // The capture's reserved amount went back to the pre-authorisation.
    expect(await medium.reload(preAuth.id)).toMatchObject({ capturedIsoAmount: 0 });
  });
});
