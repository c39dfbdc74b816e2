import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DataSource, IsNull, LessThan, LessThanOrEqual, type EntityManager } from 'typeorm';
import { isGuid } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { CardSeal, type SealedCardContent } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { PaymentAuthorizer } from '../payments/payment-authorizer.js';
import { VerifiedCards } from '../payments/verified-cards.js';
import { Transaction } from '../transactions/transaction.entity.js';
import { TransactionEventRecorder } from '../transactions/transaction-event-recorder.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import {
  THREE_DS_PROVIDER,
  type AuthenticationResult,
  type ThreeDSProvider,
} from '../three-ds-server/three-ds-provider.js';

/** What ended a challenge: the shopper's answer, or giving up / running out of time. */
export type ChallengeEnding = { answer: string } | { abandoned: 'canceled' | 'expired' };

const EXPIRY_SWEEP_MS = 15_000;
/** How often a submission waiting for another's code check looks at the session again. */
const CHECK_WAIT_POLL_MS = 50;

/** The issuer's verdict on an answer, with the card to charge. */
type CheckedAnswer = { card: SealedCardContent; result: AuthenticationResult };

/**
 * Ends a 3DS challenge: checks the answer with the issuer, wipes the sealed card (unless the payment
 * goes ahead: kept until the acquirer's answer is recorded, or saved: CardSaver), and records the
 * outcome with its transaction.* event; when the shopper is authenticated the payment is committed
 * in flight and then authorised (write-ahead). Idempotent: a session already ended is returned as it
 * is; of two endings at once, the session row lock lets the first to take it decide, and the other
 * returns that outcome (one acquirer call). Of two answers at once (on any replicas), only the one
 * that claims the check asks the issuer: a second check of one code can count at a real ACS as a
 * failed attempt, or block the card.
 */
@Injectable()
export class CompleteAuthentication implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CompleteAuthentication.name);
  private readonly seal: CardSeal;
  private readonly checkLeaseMs: number;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly authorizer: PaymentAuthorizer,
    private readonly events: TransactionEventRecorder,
    @Inject(THREE_DS_PROVIDER) private readonly provider: ThreeDSProvider,
    @Inject(PAYMENTS_CONFIG) config: PaymentsConfig,
    private readonly verifiedCards: VerifiedCards,
  ) {
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
    this.checkLeaseMs = config.THREE_DS_CHECK_LEASE_MS;
  }

  async execute(
    sessionId: string,
    ending: ChallengeEnding,
  ): Promise<{ session: ThreeDSSession; transaction: Transaction }> {
    if (!isGuid(sessionId)) throw ApiError.notFound(`3DS authentication ${String(sessionId)}`);
    const before = await this.dataSource.getRepository(ThreeDSSession).findOneBy({ id: sessionId });
    if (!before) throw ApiError.notFound(`3DS authentication ${sessionId}`);
    const payment = await this.dataSource
      .getRepository(Transaction)
      .findOneByOrFail({ id: before.transactionId });
    if (before.status !== 'Created') return { session: before, transaction: payment };

    // Past its deadline a session can only expire, even if the sweep has not reached it yet.
    const late = before.expiresAt.getTime() <= Date.now();
    // The issuer is asked before any transaction opens: a slow ACS holds no pooled connection and no
    // lock (other requests and the expiry sweep go on). Its answer is applied only if the session is
    // still open under the lock; a completion that lost the race leaves the winner's outcome alone.
    // Only the submission that claims the check asks; the others wait for its outcome (claimCheck).
    let checked: CheckedAnswer | null = null;
    let claimId: string | null = null;
    if (!late && 'answer' in ending) {
      // No claim: another submission's outcome, or lateness, is read or decided under the lock below.
      claimId = await this.claimCheck(sessionId);
      if (claimId) {
        try {
          checked = await this.checkAnswer(before, payment, ending);
        } catch (error) {
          // No verdict: the next submission may ask at once, instead of after the claim runs out.
          await this.releaseCheck(sessionId, claimId);
          throw error;
        }
      }
    }
    const outcome = await this.dataSource.transaction(async (manager) => {
      const session = await manager.findOneOrFail(ThreeDSSession, {
        where: { id: sessionId },
        lock: { mode: 'pessimistic_write' },
      });
      const transaction = await manager.findOneByOrFail(Transaction, { id: session.transactionId });
      if (session.status !== 'Created') return { session, transaction, authorization: null };
      // Another request is asking the issuer about an answer the shopper gave in time: its verdict
      // decides, not the deadline that passed meanwhile (nor a late resubmission). Its claim runs
      // out if that request died, and the session then ends here. A shopper's cancel ends it at once.
      const cancel = 'abandoned' in ending && ending.abandoned === 'canceled';
      if (!checked && !cancel && (await this.checkedByAnother(manager, sessionId, claimId)))
        return { session, transaction, authorization: null };

      let result: AuthenticationResult;
      if (checked) result = checked.result;
      else if (!late && 'abandoned' in ending)
        result = this.provider.abandoned(transaction.brand!, ending.abandoned);
      else result = this.provider.abandoned(transaction.brand!, 'expired'); // late, or its card is gone

      const authentication = this.authorizer.applyAuthentication(transaction, checked?.card ?? null, {
        ...result,
        dsTransactionId: session.dsTransactionId,
      });
      const authorization = authentication && { ...authentication, sealedOnSession: true };
      // The card stays sealed for a payment going ahead until the acquirer's answer is recorded: if
      // this process dies before the acquirer has it, the recovery finishes the authorisation on any
      // replica instead of voiding it (the shopper answered; the card is nowhere else). Wiped then,
      // unless its shopper asked to save it (CardSaver).
      const keepsCard = authorization !== null;
      Object.assign(session, result, {
        checkClaimId: null,
        checkClaimedUntil: null,
        challengeCompletedAt: new Date(),
        sealedCard: keepsCard ? session.sealedCard : null,
      });
      await manager.save(session);
      await manager.save(transaction);
      // In flight to the acquirer: committed first, announced with its outcome (write-ahead).
      if (!authorization) await this.events.record(manager, transaction);
      return { session, transaction, authorization };
    });
    const { session, transaction, authorization } = outcome;
    // An order another attempt paid meanwhile refuses this one: it is recorded Denied (BYRD205),
    // which the 3DS answers report like any other declined payment.
    if (authorization) await this.authorizer.authorize(transaction, authorization);
    else this.events.flush();
    await this.verifiedCards.ended(transaction);
    return { session, transaction };
  }

  /**
   * Claims the issuer's check of this challenge's answer for this request: a short committed change
   * of the session row (database time, so replicas agree), no lock or transaction held while the
   * issuer answers; its id, or null when there is no check left to make. While another request's
   * claim holds, waits: null once that one recorded its outcome or the challenge is past its
   * deadline. A claim whose request died (process
   * killed) runs out after THREE_DS_CHECK_LEASE_MS and the waiting, or a later, submission takes it.
   */
  private async claimCheck(sessionId: string): Promise<string | null> {
    const claimId = randomUUID();
    for (;;) {
      // An UPDATE answers [rows, affected] through TypeORM.
      const [, claimed] = await this.dataSource.query<[unknown[], number]>(
        `UPDATE three_ds_sessions
            SET check_claim_id = $2, check_claimed_until = now() + $3::int * interval '1 millisecond'
          WHERE id = $1 AND status = 'Created' AND expires_at > now()
            AND (check_claimed_until IS NULL OR check_claimed_until <= now())`,
        [sessionId, claimId, this.checkLeaseMs],
      );
      if (claimed === 1) return claimId;
      const [session] = await this.dataSource.query<{ status: string; late: boolean }[]>(
        `SELECT status, expires_at <= now() AS late FROM three_ds_sessions WHERE id = $1`,
        [sessionId],
      );
      if (session.status !== 'Created' || session.late) return null;
      await sleep(CHECK_WAIT_POLL_MS);
    }
  }

  /**
   * Whether another request's claim to check the shopper's answer holds now (database time, as
   * claimed); `ownClaim`, this request's own (whose check brought no verdict), is not another's.
   */
  private async checkedByAnother(
    manager: EntityManager,
    sessionId: string,
    ownClaim: string | null,
  ): Promise<boolean> {
    const [row] = await manager.query<{ held: boolean }[]>(
      `SELECT coalesce(check_claimed_until > now() AND check_claim_id IS DISTINCT FROM $2::uuid, false) AS held
         FROM three_ds_sessions WHERE id = $1`,
      [sessionId, ownClaim],
    );
    return row.held;
  }

  /** Gives back a claim whose check brought no verdict (the issuer failed), if it is still ours. */
  private async releaseCheck(sessionId: string, claimId: string): Promise<void> {
    try {
      await this.dataSource.query(
        `UPDATE three_ds_sessions SET check_claim_id = NULL, check_claimed_until = NULL
          WHERE id = $1 AND check_claim_id = $2`,
        [sessionId, claimId],
      );
    } catch (error) {
      // It runs out by itself.
      this.logger.warn(
        `3DS session ${sessionId}: its code check claim stays until it runs out: ${String(error)}`,
      );
    }
  }

  /**
   * The issuer's verdict on the shopper's answer (an outside call), with the card to charge; null
   * when there is no answer to check (the shopper gave up) or its card cannot be opened.
   */
  private async checkAnswer(
    session: ThreeDSSession,
    transaction: Transaction,
    ending: ChallengeEnding,
  ): Promise<CheckedAnswer | null> {
    if (!('answer' in ending)) return null;
    // Opened only to check an answer in time, so a card that cannot be opened never stops an end.
    const card = this.openCard(session);
    if (!card) return null;
    const result = await this.provider.answerChallenge(
      { number: card.number, brand: transaction.brand! },
      ending.answer,
    );
    return { card, result };
  }

  /** Challenges nobody answered in time end as expired, so their payments and orders move on. */
  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.expireAbandoned(), EXPIRY_SWEEP_MS);
  }

  beforeApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Returns how many challenges it ended. */
  async expireAbandoned(now = new Date()): Promise<number> {
    let due: Pick<ThreeDSSession, 'id'>[];
    try {
      due = await this.dataSource.getRepository(ThreeDSSession).find({
        select: { id: true },
        // Not those whose answer is being checked (their claim decides, or runs out).
        where: [
          { status: 'Created', expiresAt: LessThan(now), checkClaimedUntil: IsNull() },
          { status: 'Created', expiresAt: LessThan(now), checkClaimedUntil: LessThanOrEqual(now) },
        ],
        order: { expiresAt: 'ASC' },
        take: 100,
      });
    } catch (error) {
      this.logger.error(`3DS expiry sweep failed: ${String(error)}`);
      return 0;
    }
    let expired = 0;
    for (const { id } of due) {
      // One session that cannot end must not hold up the rest of the batch (or every later sweep).
      try {
        await this.execute(id, { abandoned: 'expired' });
        expired++;
      } catch (error) {
        this.logger.error(`3DS session ${id} could not be expired: ${String(error)}`);
      }
    }
    return expired;
  }

  /**
   * The card sealed for the challenge, or null when there is none or it cannot be opened: sealed
   * under another CARD_SEAL_KEY (a replica configured apart, or the key changed since).
   */
  private openCard(session: ThreeDSSession): SealedCardContent | null {
    if (!session.sealedCard) return null;
    return this.seal.openOrNull(session.sealedCard, session.id);
  }
}
