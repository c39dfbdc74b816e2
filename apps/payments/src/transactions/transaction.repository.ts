import { Injectable } from '@nestjs/common';
import { DataSource, In, Not, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { isGuid, type TransactionStatus } from '@byrd/contracts';
import { queryReplanned } from '@byrd/platform';
import { ofIdempotencyKey, ofMerchant, Transaction } from './transaction.entity.js';

/** The money a follow-up operation moves: its source, and the payment or pre-auth that holds it. */
export interface LockedMoney {
  source: Transaction;
  /** The source itself, or for a capture, the pre-authorisation it captured. */
  root: Transaction;
}

const FOR_UPDATE = { mode: 'pessimistic_write' } as const;
/**
 * The row still waits under the claim its caller read (`acquirer_pending_since` as the write-ahead or
 * the recovery's claim set it), to the millisecond as the caller's Date holds it: the one condition
 * of every write a claim entitles (outcomes: AcquirerOutcomeRecorder).
 */
export const underClaim = (claim: string, column = 'acquirer_pending_since') =>
  `date_trunc('milliseconds', ${column}) = ${claim}`;

/**
 * The transactions table: the reads and writes of the use cases that move money. Methods taking a
 * `manager` run in the caller's database transaction (and keep their row locks until it ends).
 */
@Injectable()
export class TransactionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Locks a merchant's transaction and the money behind it, root first then source (so concurrent
   * operations on one payment serialise in one order). Null when the id is not a GUID or not theirs.
   */
  async lockMoneyOf(manager: EntityManager, merchantId: string, id: string): Promise<LockedMoney | null> {
    const found = isGuid(id) ? await manager.findOneBy(Transaction, ofMerchant(merchantId, { id })) : null;
    if (!found) return null;
    const rootId =
      found.operationType === 'Capture' && found.sourceTransactionId ? found.sourceTransactionId : found.id;
    const root = await this.lock(manager, rootId);
    const source = rootId === found.id ? root : await this.lock(manager, found.id);
    return { source, root };
  }

  /**
   * The latest operation of this kind on `sourceId` that a request with this idempotency-key created
   * (`ofIdempotencyKey`), in none of the `except` statuses, or null. Read under the source's
   * lock (`lockMoneyOf`), so a retry racing the request it repeats sees its row once it committed.
   */
  async operationOfKey(
    manager: EntityManager,
    key: {
      merchantId: string;
      idempotencyKey: string;
      sourceId: string;
      operationType: Transaction['operationType'];
    },
    except: readonly TransactionStatus[],
  ): Promise<Transaction | null> {
    return manager.findOne(Transaction, {
      where: ofIdempotencyKey(key.merchantId, key.idempotencyKey, {
        sourceTransactionId: key.sourceId,
        operationType: key.operationType,
        status: Not(In([...except])),
      }),
      order: { createdAt: 'DESC' },
    });
  }

  /**
   * The amount of a pre-authorisation's captures (or releases) still in flight at the acquirer (and
   * those TemporaryFailed until the recovery settles them): reserved on its captured (released)
   * total, but not known to be done. Read under the pre-auth's lock, which every capture and release
   * takes to start and to finish.
   */
  async inFlightOf(
    manager: EntityManager,
    preAuthId: string,
    operation: 'Capture' | 'Release',
  ): Promise<number> {
    const [row] = await manager.query<{ total: string }[]>(
      `SELECT coalesce(sum(iso_amount), 0) AS total FROM transactions
        WHERE source_transaction_id = $1 AND operation_type = $2 AND acquirer_pending_since IS NOT NULL`,
      [preAuthId, operation],
    );
    return Number(row.total);
  }

  /** Locks a transaction known to exist. */
  lock(manager: EntityManager, id: string): Promise<Transaction> {
    return manager.findOneOrFail(Transaction, { where: { id }, lock: FOR_UPDATE });
  }

  async insert(manager: EntityManager, transaction: Transaction): Promise<void> {
    await manager.insert(Transaction, transaction as QueryDeepPartialEntity<Transaction>);
  }

  /** Writes the running balances of the money an operation moved (the source, and its root). */
  async saveBalances(manager: EntityManager, { source, root }: LockedMoney): Promise<void> {
    await manager.save(source);
    if (root !== source) await manager.save(root);
  }

  /** Writes an outcome applied to the transaction (status, code, description, still in flight or not). */
  async saveOutcome(manager: EntityManager, transaction: Transaction): Promise<void> {
    const { status, code, description, updatedAt, acquirerPendingSince } = transaction;
    await manager.update(
      Transaction,
      { id: transaction.id },
      { status, code, description, updatedAt, acquirerPendingSince },
    );
  }

  /** A transaction known to exist. */
  byId(id: string): Promise<Transaction> {
    return this.dataSource.getRepository(Transaction).findOneByOrFail({ id });
  }

  /**
   * Claims up to `limit` acquirer calls still in flight `dueAfterMs` after they were sent (or last
   * claimed), oldest first, and returns their ids. Claiming moves `acquirer_pending_since` to now (a
   * lease), so other replicas skip them for another delay; SKIP LOCKED keeps concurrent sweeps from
   * waiting on each other.
   */
  async claimCallsInFlight(dueAfterMs: number, limit: number): Promise<string[]> {
    const claimed = await queryReplanned<{ id: string }>(
      this.dataSource,
      `UPDATE transactions SET acquirer_pending_since = now()
        WHERE id IN (SELECT id FROM transactions
                      WHERE acquirer_pending_since < now() - make_interval(secs => $1::double precision / 1000)
                      ORDER BY acquirer_pending_since
                      LIMIT $2
                      FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [dueAfterMs, limit],
    );
    return claimed.map((row) => row.id);
  }

  /**
   * Makes a call still in flight due for the next recovery sweep (`claimCallsInFlight` with
   * `dueAfterMs`), instead of a whole delay after it was sent: for a call its request gave up on
   * before the acquirer was asked, so there is no answer on the wire to wait for. Only under the
   * claim the caller read (as AcquirerOutcomeRecorder records): a request that stalled past a
   * recovery's claim must not move that claim.
   */
  async dueForRecovery(transaction: Transaction, dueAfterMs: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE transactions
          SET acquirer_pending_since = now() - make_interval(secs => $2::double precision / 1000)
        WHERE id = $1 AND ${underClaim('$3')}`,
      [transaction.id, dueAfterMs, transaction.acquirerPendingSince],
    );
  }

  /**
   * Marks a payment refused by its order, only under the claim the caller read: a request that
   * stalled past the recovery (which settles the payment another way) must not relabel it.
   * Returns whether it did.
   */
  async markRefusedByOrder(transaction: Transaction): Promise<boolean> {
    // An UPDATE answers [rows, affected] through TypeORM.
    const [, marked] = await this.dataSource.query<[unknown[], number]>(
      `UPDATE transactions SET refused_by_order = true WHERE id = $1 AND ${underClaim('$2')}`,
      [transaction.id, transaction.acquirerPendingSince],
    );
    return marked === 1;
  }

  /** A token's 3DS card verification (the vault keeps its id), or null. */
  verification(id: string): Promise<Transaction | null> {
    return this.dataSource.getRepository(Transaction).findOneBy({ id, operationType: 'Verification' });
  }

  /** Whether any 3DS verification of the merchant's token succeeded. */
  async tokenVerified(merchantId: string, tokenId: string): Promise<boolean> {
    const passed = await this.dataSource.getRepository(Transaction).findOne({
      select: { id: true },
      where: { tokenId, merchantId, operationType: 'Verification', status: 'Success' },
    });
    return passed !== null;
  }
}
