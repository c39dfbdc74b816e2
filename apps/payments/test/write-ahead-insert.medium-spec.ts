import { randomBytes, randomUUID } from 'node:crypto';
import { insertAtomically } from '@byrd/platform';
import { markInFlight } from '../src/payments/payment-authorizer.js';
import { newPayment } from '../src/payments-core/new-payment.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsMedium } from './medium.js';

/**
 * Payments written together (insertAtomically's group commit sends their columns as arrays) come
 * back exactly as written: every column type of a transaction and its 3DS session, on a real
 * PostgreSQL (medium tier).
 */
describe('payments written together (medium)', () => {
  let medium: PaymentsMedium;

  beforeAll(async () => (medium = await PaymentsMedium.start()));
  afterAll(() => medium?.close());

  const payment = (i: number) => {
    const now = new Date(Date.now() - i * 1000);
    const transaction = newPayment({
      payer: {
        merchantId: `merchant-${i}`,
        mode: 'sandbox',
        order: null,
        initiatedFrom: 'Server',
        orderRef: `ref "${i}" \\ {a,b}`,
      },
      request: { currency: i % 2 ? 'EUR' : 'JPY' },
      isoAmount: 1000 + i,
      paymentMethod: 'card',
      isPreAuth: i % 3 === 0,
      acquirer: 'SIMULATED',
      requestId: randomUUID(),
      expiresAt: new Date(now.getTime() + 600_000),
      now,
    });
    if (i % 2) markInFlight(transaction, now);
    else applyOutcome(transaction, 'Created', 'BYRD207');
    transaction.asyncDetails = i % 4 ? null : { note: `quote " backslash \\ ${i}`, list: [i, null] };
    const session = Object.assign(new ThreeDSSession(), {
      id: randomUUID(),
      transactionId: transaction.id,
      merchantId: transaction.merchantId,
      status: 'Created',
      challengeRequired: i % 2 === 0,
      acsTransId: randomUUID(),
      dsTransactionId: randomUUID(),
      protocolVersion: '2.2.0',
      transStatus: null,
      transStatusReason: null,
      eci: null,
      aav: null,
      challengeCompletedAt: null,
      checkClaimId: null,
      checkClaimedUntil: null,
      sealedCard: i % 2 ? null : randomBytes(48),
      browser: i % 5 ? null : { userAgent: 'Mozilla/5.0 "x"', colorDepth: 24 },
      expiresAt: transaction.expiresAt,
      createdAt: now,
      updatedAt: now,
    });
    return { transaction, session };
  };

  it('stores every column of payments inserted at once as a lone insert would', async () => {
    const payments = Array.from({ length: 24 }, (_, i) => payment(i));
    await Promise.all(
      payments.map(({ transaction, session }) =>
        insertAtomically(medium.dataSource, [
          { target: Transaction, entity: transaction },
          { target: ThreeDSSession, entity: session },
        ]),
      ),
    );

    const [{ statements }] = await medium.dataSource.query<{ statements: number }[]>(
      `SELECT count(DISTINCT xmin::text)::int AS statements FROM transactions WHERE id = ANY ($1::uuid[])`,
      [payments.map((p) => p.transaction.id)],
    );
    expect(statements).toBeLessThan(24);
    const sessions = medium.dataSource.getRepository(ThreeDSSession);
    for (const { transaction, session } of payments) {
      expect(await medium.reload(transaction.id)).toEqual(transaction);
      expect(await sessions.findOneByOrFail({ id: session.id })).toEqual(session);
    }
  });
});
