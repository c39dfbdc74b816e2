import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DataSource, LessThan } from 'typeorm';
import { isGuid } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { CardSeal, type SealedCardContent } from '../cards/card-seal.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { PaymentAuthorizer } from '../payments/payment-authorizer.js';
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

/**
 * Ends a 3DS challenge: checks the answer with the issuer, wipes the sealed card, and records the
 * outcome with its transaction.* event; when the shopper is authenticated the payment is committed
 * in flight and then authorised (write-ahead). Idempotent: a session already ended (the session row
 * lock makes a concurrent second ending wait for the first) is returned as it is.
 */
@Injectable()
export class CompleteAuthentication implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CompleteAuthentication.name);
  private readonly seal: CardSeal;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly authorizer: PaymentAuthorizer,
    private readonly events: TransactionEventRecorder,
    @Inject(THREE_DS_PROVIDER) private readonly provider: ThreeDSProvider,
    @Inject(PAYMENTS_CONFIG) config: PaymentsConfig,
  ) {
    this.seal = new CardSeal(config.CARD_SEAL_KEY);
  }

  async execute(
    sessionId: string,
    ending: ChallengeEnding,
  ): Promise<{ session: ThreeDSSession; transaction: Transaction }> {
    if (!isGuid(sessionId)) throw ApiError.notFound(`3DS authentication ${String(sessionId)}`);
    const outcome = await this.dataSource.transaction(async (manager) => {
      const session = await manager.findOne(ThreeDSSession, {
        where: { id: sessionId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!session) throw ApiError.notFound(`3DS authentication ${sessionId}`);
      const transaction = await manager.findOneByOrFail(Transaction, { id: session.transactionId });
      if (session.status !== 'Created') return { session, transaction, authorization: null };

      // Past its deadline a session can only expire, even if the sweep has not reached it yet.
      const late = session.expiresAt.getTime() <= Date.now();
      const answer = !late && 'answer' in ending ? ending.answer : null;
      // Opened only to check an answer in time, so a card that cannot be opened never stops an end.
      const card = answer === null ? null : this.openCard(session);
      let result: AuthenticationResult;
      if (card && answer !== null)
        result = await this.provider.answerChallenge(
          { number: card.number, brand: transaction.brand! },
          answer,
        );
      else if (!late && 'abandoned' in ending)
        result = this.provider.abandoned(transaction.brand!, ending.abandoned);
      else result = this.provider.abandoned(transaction.brand!, 'expired'); // late, or its card is gone

      const authorization = this.authorizer.applyAuthentication(transaction, card, {
        ...result,
        dsTransactionId: session.dsTransactionId,
      });
      Object.assign(session, result, { challengeCompletedAt: new Date(), sealedCard: null });
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
    return { session, transaction };
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
        where: { status: 'Created', expiresAt: LessThan(now) },
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
    try {
      return this.seal.open(session.sealedCard, session.id);
    } catch (error) {
      this.logger.error(`3DS session ${session.id}: its sealed card cannot be opened: ${String(error)}`);
      return null;
    }
  }
}
