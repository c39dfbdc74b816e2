import { randomUUID } from 'node:crypto';
import { ApiError } from '@byrd/platform';
import { ChargebackEventRecorder } from '../src/chargebacks/chargeback-events.js';
import { ChargebackRepository } from '../src/chargebacks/chargeback.repository.js';
import { OpenChargeback } from '../src/chargebacks/open-chargeback.usecase.js';
import { PaymentsMedium } from './medium.js';

/**
 * OpenChargeback on a real PostgreSQL (medium tier): what can still be charged back is what was
 * neither refunded nor disputed by a chargeback that was not won, and for a capture also what its
 * pre-authorisation's captures leave.
 */
describe('OpenChargeback (medium)', () => {
  let medium: PaymentsMedium;
  let open: OpenChargeback;
  let merchantId: string;

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    open = new OpenChargeback(
      medium.dataSource,
      new ChargebackEventRecorder(medium.outbox()),
      new ChargebackRepository(),
      medium.transactions,
    );
  });

  afterAll(() => medium?.close());

  beforeEach(() => {
    merchantId = `merchant-${randomUUID()}`;
  });

  const refusalOf = (attempt: Promise<unknown>) =>
    attempt.then(
      () => {
        throw new Error('expected a refusal, the chargeback opened');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(ApiError);
        return error as ApiError;
      },
    );

  it('disputes by default what is neither refunded nor held by a chargeback not won', async () => {
    const payment = await medium.settled(merchantId, 'Payment', 10_000, { refundedIsoAmount: 1000 });
    await medium.chargeback(payment, 2000, { status: 'Disputing', resolution: null });
    await medium.chargeback(payment, 3000, { status: 'Lost', resolution: 'Lost' });
    await medium.chargeback(payment, 4000, { status: 'Won', resolution: 'Won' });
    const opened = await open.execute(merchantId, { transactionId: payment.id });
    expect(opened).toMatchObject({ transactionId: payment.id, isoAmount: 4000, status: 'Created' });
    expect(await refusalOf(open.execute(merchantId, { transactionId: payment.id }))).toMatchObject({
      code: 'BYRD205',
      message: `Nothing of transaction ${payment.id} is left to charge back: it is refunded or already disputed`,
    });
  });

  it('opens a new chargeback on the money a withdrawn one (closed, no resolution) gave back', async () => {
    const payment = await medium.settled(merchantId, 'Payment', 5000);
    await medium.chargeback(payment, 5000, { status: 'Closed', resolution: null });
    const opened = await open.execute(merchantId, { transactionId: payment.id });
    expect(opened).toMatchObject({ transactionId: payment.id, isoAmount: 5000 });
  });

  it("bounds a capture's chargeback by what its pre-authorisation's captures leave", async () => {
    const preAuth = await medium.settled(merchantId, 'PreAuth', 10_000, {
      capturedIsoAmount: 10_000,
      refundedIsoAmount: 2000,
    });
    const first = await medium.capturedEarlier(preAuth, 6000);
    const second = await medium.capturedEarlier(preAuth, 4000);
    await medium.chargeback(first, 5000, { status: 'Created', resolution: null });
    // The second capture's own 4000 are untouched, but of the pre-auth only 10000 - 2000 - 5000 are left.
    const opened = await open.execute(merchantId, { transactionId: second.id });
    expect(opened).toMatchObject({ transactionId: second.id, isoAmount: 3000 });
  });

  it("leaves out of a capture's bound its pre-authorisation's captures still in flight", async () => {
    const preAuth = await medium.settled(merchantId, 'PreAuth', 10_000, {
      capturedIsoAmount: 10_000,
      refundedIsoAmount: 2000,
    });
    const settled = await medium.capturedEarlier(preAuth, 6000);
    await medium.captureInFlight(preAuth, 4000);
    // Of the 6000 taken, 2000 were refunded through the pre-auth: the 4000 in flight are not money yet.
    const opened = await open.execute(merchantId, { transactionId: settled.id });
    expect(opened).toMatchObject({ transactionId: settled.id, isoAmount: 4000 });
  });

  it("refuses another merchant's transaction, and what did not settle", async () => {
    const payment = await medium.settled(merchantId, 'Payment', 5000);
    const theirs = open.execute(`merchant-${randomUUID()}`, { transactionId: payment.id });
    expect(await refusalOf(theirs)).toMatchObject({ message: `Transaction ${payment.id} was not found` });
    const preAuth = await medium.settled(merchantId, 'PreAuth', 5000);
    expect(await refusalOf(open.execute(merchantId, { transactionId: preAuth.id }))).toMatchObject({
      code: 'BYRD205',
    });
  });
});
