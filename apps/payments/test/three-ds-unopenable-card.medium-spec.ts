import { randomBytes, randomUUID } from 'node:crypto';
import { CardSeal } from '../src/cards/card-seal.js';
import { CompleteAuthentication } from '../src/three-ds/complete-authentication.usecase.js';
import { VerifiedCards } from '../src/payments/verified-cards.js';
import { SandboxThreeDSProvider } from '../src/three-ds-server/sandbox-three-ds.provider.js';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

/** The sandbox challenge card (OTP 1234). */
const CHALLENGE_CARD = { number: '5555341244441115', expiration: '12/40' };
const newSealKey = () => randomBytes(32).toString('base64');

/**
 * A challenge whose sealed card this process cannot open: sealed by a replica with another
 * CARD_SEAL_KEY (or before the key changed). Its session must still end, with its payment, and must
 * not stop the expiry of the challenges behind it (medium tier, real PostgreSQL).
 */
describe('3DS challenges whose sealed card cannot be opened (medium)', () => {
  let medium: PaymentsMedium;
  let complete: CompleteAuthentication;
  const ownKey = newSealKey();
  const otherReplicaKey = newSealKey();

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    const { dataSource } = medium;
    const config = { ...medium.config, CARD_SEAL_KEY: ownKey };
    const events = new TransactionEventRecorder(medium.outbox());
    const authorizer = medium.authorizer(events, config);
    complete = new CompleteAuthentication(
      dataSource,
      authorizer,
      events,
      new SandboxThreeDSProvider(),
      config,
      new VerifiedCards(medium.rpc()),
    );
  });
  afterAll(() => medium?.close());

  /** A payment waiting for its challenge (BYRD207), its card sealed with `sealKey`. */
  async function challenged(sealKey: string, expiresAt: Date): Promise<ThreeDSSession> {
    const payment = medium.orderless(`merchant-${randomUUID()}`, 2500);
    Object.assign(payment, { brand: 'MASTER', expiresAt });
    applyOutcome(payment, 'Created', 'BYRD207');
    await medium.insert(payment);
    const id = randomUUID();
    const session = Object.assign(new ThreeDSSession(), {
      id,
      transactionId: payment.id,
      merchantId: payment.merchantId,
      status: 'Created',
      challengeRequired: true,
      acsTransId: randomUUID(),
      dsTransactionId: randomUUID(),
      protocolVersion: '2.2.0',
      sealedCard: new CardSeal(sealKey).seal(CHALLENGE_CARD, id),
      expiresAt,
    });
    return medium.dataSource.getRepository(ThreeDSSession).save(session);
  }

  /** The session and its payment as stored, and the payment's events. */
  async function ended(session: ThreeDSSession) {
    const stored = await medium.dataSource.getRepository(ThreeDSSession).findOneByOrFail({ id: session.id });
    const payment = await medium.reload(session.transactionId);
    const events = await medium.dataSource.query<{ subject: string }[]>(
      `SELECT subject FROM outbox WHERE payload -> 'data' ->> 'transactionId' = $1 ORDER BY seq`,
      [payment.id],
    );
    return {
      session: { status: stored.status, cardWiped: stored.sealedCard === null },
      payment: { status: payment.status, code: payment.code },
      events: events.map((e) => e.subject),
    };
  }
  const expiredAndAnnounced = {
    session: { status: 'Expired', cardWiped: true },
    payment: { status: 'Denied', code: 'BYRD205' },
    events: ['transaction.payment.failed'],
  };

  it('ends an answered challenge whose card cannot be opened, instead of failing it for good', async () => {
    const session = await challenged(otherReplicaKey, new Date(Date.now() + 600_000));

    await expect(complete.execute(session.id, { answer: '1234' })).resolves.toBeDefined();

    expect(await ended(session)).toEqual(expiredAndAnnounced);
  });

  it('expires abandoned challenges behind one whose card cannot be opened', async () => {
    // The unreadable one is the oldest and written first: the first row the sweep meets.
    const unreadable = await challenged(otherReplicaKey, new Date(Date.now() - 120_000));
    const behindIt = await challenged(ownKey, new Date(Date.now() - 60_000));

    await complete.expireAbandoned();

    expect([await ended(unreadable), await ended(behindIt)]).toEqual([
      expiredAndAnnounced,
      expiredAndAnnounced,
    ]);
  });
});
