import { randomUUID } from 'node:crypto';
import type { CardBrand } from '@byrd/contracts';
import type { AuthorizationRequest } from '../src/acquirer/acquirer.js';
import { SandboxAcquirer } from '../src/acquirer/sandbox-acquirer.js';
import { CardSeal } from '../src/cards/card-seal.js';
import { CompleteAuthentication } from '../src/three-ds/complete-authentication.usecase.js';
import { VerifiedCards } from '../src/payments/verified-cards.js';
import type { AuthenticationResult } from '../src/three-ds-server/three-ds-provider.js';
import { SandboxThreeDSProvider } from '../src/three-ds-server/sandbox-three-ds.provider.js';
import { ThreeDSSession } from '../src/three-ds-server/three-ds-session.entity.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import { PaymentsMedium } from './medium.js';

const CHALLENGE_CARD = { number: '5555341244441115', expiration: '12/40' };

/** The sandbox issuer, made slow: each code check waits for `hold` (the test opens it) or `delayMs`. */
class SlowIssuer extends SandboxThreeDSProvider {
  delayMs = 0;
  hold: Promise<void> | null = null;
  checking = 0;
  /** The next check fails (the ACS unreachable) when set. */
  failNext: Error | null = null;

  override async answerChallenge(
    card: { number: string; brand: CardBrand },
    answer: string,
  ): Promise<AuthenticationResult> {
    this.checking++;
    await (this.hold ?? new Promise((resolve) => setTimeout(resolve, Math.random() * this.delayMs)));
    const failure = this.failNext;
    this.failNext = null;
    if (failure) throw failure;
    return super.answerChallenge(card, answer);
  }
}

/**
 * The issuer's code check is an outside call: a slow ACS must not hold a database connection or the
 * session's lock meanwhile, and two endings of one challenge at once must still give one acquirer
 * call and one outcome (medium tier, real PostgreSQL).
 */
describe('3DS challenges checked by a slow issuer (medium)', () => {
  let medium: PaymentsMedium;
  let complete: CompleteAuthentication;
  const issuer = new SlowIssuer();
  const acquirerCalls = new Map<string, number>();

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    const { dataSource, config } = medium;
    const events = new TransactionEventRecorder(medium.outbox());
    // Counts what reaches the acquirer (its ledger keeps one row per reference, whatever the calls).
    const counting = new (class extends SandboxAcquirer {
      override authorize(request: AuthorizationRequest) {
        acquirerCalls.set(request.reference, (acquirerCalls.get(request.reference) ?? 0) + 1);
        return super.authorize(request);
      }
    })(dataSource, config);
    complete = new CompleteAuthentication(
      dataSource,
      medium.authorizer(events, config, counting),
      events,
      issuer,
      config,
      new VerifiedCards(medium.rpc()),
    );
  });
  afterAll(() => medium?.close());

  /** A payment of 25.00 waiting for its challenge (BYRD207). */
  async function challenged(): Promise<ThreeDSSession> {
    const payment = medium.orderless(`merchant-${randomUUID()}`, 2500);
    Object.assign(payment, { brand: 'MASTER', expiresAt: new Date(Date.now() + 600_000) });
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
      sealedCard: new CardSeal(medium.config.CARD_SEAL_KEY).seal(CHALLENGE_CARD, id),
      expiresAt: payment.expiresAt,
    });
    return medium.dataSource.getRepository(ThreeDSSession).save(session);
  }

  /** Holds the issuer's next code checks until the returned function is called. */
  function holdIssuer(): () => void {
    let open!: () => void;
    issuer.hold = new Promise((resolve) => (open = resolve));
    issuer.checking = 0;
    return open;
  }

  async function untilIssuerAsked(): Promise<void> {
    while (issuer.checking === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  async function eventsOf(transactionId: string): Promise<string[]> {
    const rows = await medium.dataSource.query<{ subject: string }[]>(
      `SELECT subject FROM outbox WHERE payload -> 'data' ->> 'transactionId' = $1 ORDER BY seq`,
      [transactionId],
    );
    return rows.map((row) => row.subject);
  }

  it("holds no database connection or lock while the issuer checks a code: the shopper's Cancel ends it at once", async () => {
    const session = await challenged();
    const open = holdIssuer();
    try {
      const answering = complete.execute(session.id, { answer: '1234' });
      await untilIssuerAsked();

      const waitingInTransaction = await medium.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
      );
      expect(waitingInTransaction[0].n).toBe(0);
      const canceled = await Promise.race([
        complete.execute(session.id, { abandoned: 'canceled' }),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 3_000)),
      ]);
      expect(canceled?.transaction.status).toBe('Canceled');

      open();
      // The code checked late finds the challenge ended: the Cancel stands, nothing is charged.
      const answered = await answering;
      expect([answered.session.transStatusReason, answered.transaction.status]).toEqual(['19', 'Canceled']);
      expect(acquirerCalls.get(session.transactionId)).toBeUndefined();
      expect(await eventsOf(session.transactionId)).toEqual(['transaction.payment.canceled']);
    } finally {
      open();
      issuer.hold = null;
    }
  });

  it('two endings of one challenge at once give one outcome, one issuer check and at most one acquirer call, round after round', async () => {
    issuer.delayMs = 30;
    for (let round = 0; round < 30; round++) {
      const session = await challenged();
      issuer.checking = 0;
      // Even rounds: the same code twice (a double submit, two tabs); odd: a code against Cancel.
      const endings =
        round % 2 === 0
          ? [{ answer: '1234' }, { answer: '1234' }]
          : [{ answer: '1234' }, { abandoned: 'canceled' as const }];
      const ended = await Promise.all(endings.map((ending) => complete.execute(session.id, ending)));
      const stored = await medium.reload(session.transactionId);
      // Both callers are told the one outcome that was recorded (or, the loser, its payment in flight).
      expect(ended.map((e) => e.session.status)).toEqual([ended[0].session.status, ended[0].session.status]);
      for (const { transaction } of ended)
        expect([stored.status, 'Processing']).toContain(transaction.status);
      // A second check of the same code can count at a real ACS as a failed attempt: never made.
      if (round % 2 === 0) expect(issuer.checking).toBe(1);
      else expect(issuer.checking).toBeLessThanOrEqual(1);
      const calls = acquirerCalls.get(session.transactionId) ?? 0;
      const events = await eventsOf(session.transactionId);
      if (stored.status === 'Success') {
        expect([calls, events]).toEqual([1, ['transaction.payment.success']]);
      } else {
        expect(round % 2).toBe(1);
        expect([stored.status, calls, events]).toEqual(['Canceled', 0, ['transaction.payment.canceled']]);
      }
    }
  }, 120_000);

  it('waits out the code check of a request that died (its claim left behind), then checks the code once', async () => {
    const session = await challenged();
    // What a process killed while the issuer checked a code leaves: the claim, never released.
    await medium.dataSource.query(
      `UPDATE three_ds_sessions
          SET check_claim_id = $2, check_claimed_until = now() + interval '1500 milliseconds'
        WHERE id = $1`,
      [session.id, randomUUID()],
    );
    issuer.delayMs = 0;
    issuer.checking = 0;
    const started = Date.now();
    const ended = await complete.execute(session.id, { answer: '1234' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect([ended.session.status, ended.transaction.status, issuer.checking]).toEqual([
      'Authorized',
      'Success',
      1,
    ]);
    const stored = await medium.dataSource.getRepository(ThreeDSSession).findOneByOrFail({ id: session.id });
    expect([stored.checkClaimId, stored.checkClaimedUntil]).toEqual([null, null]);
    expect(acquirerCalls.get(session.transactionId)).toBe(1);
  });

  it('gives the check back when the issuer fails, so the shopper can submit again at once', async () => {
    const session = await challenged();
    issuer.delayMs = 0;
    issuer.checking = 0;
    issuer.failNext = new Error('ACS unreachable');
    await expect(complete.execute(session.id, { answer: '1234' })).rejects.toThrow('ACS unreachable');
    const left = await medium.dataSource.getRepository(ThreeDSSession).findOneByOrFail({ id: session.id });
    expect([left.status, left.checkClaimId, left.checkClaimedUntil]).toEqual(['Created', null, null]);

    const started = Date.now();
    const ended = await complete.execute(session.id, { answer: '1234' });
    expect(Date.now() - started).toBeLessThan(medium.config.THREE_DS_CHECK_LEASE_MS);
    expect([ended.transaction.status, issuer.checking]).toEqual(['Success', 2]);
  });

  it('lets a code given in time decide, when its deadline passes while the issuer checks it', async () => {
    const session = await challenged();
    const open = holdIssuer();
    try {
      const answering = complete.execute(session.id, { answer: '1234' });
      await untilIssuerAsked();
      // The deadline passes meanwhile: the SDK's next read and the expiry sweep both come by.
      await medium.dataSource
        .getRepository(ThreeDSSession)
        .update({ id: session.id }, { expiresAt: new Date(Date.now() - 1_000) });
      const read = await complete.execute(session.id, { abandoned: 'expired' });
      expect(read.session.status).toBe('Created');
      expect(await complete.expireAbandoned()).toBe(0);

      open();
      const ended = await answering;
      expect([ended.session.status, ended.transaction.status]).toEqual(['Authorized', 'Success']);
      expect(acquirerCalls.get(session.transactionId)).toBe(1);
    } finally {
      issuer.hold = null;
    }
  });
});
