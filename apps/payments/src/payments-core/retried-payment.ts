import { DataSource, type EntityManager } from 'typeorm';
import { reconcileAmounts, type CreatePaymentRequest } from '@byrd/contracts';
import {
  checkCard,
  checkoutScopeOf,
  columnsOf,
  GroupCommit,
  IDEMPOTENCY_RETENTION_MS,
  lockKeyInTransaction,
  queryReplanned,
  Refusal,
} from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';
import { NO_MONEY_HELD } from './order-lock.js';
import type { PayerResolver, PaymentActor } from './payer.js';

export interface RetriedPayment {
  /**
   * The key to keep on a new payment: the merchant's own, or a shopper's scoped by its checkout key
   * (`checkoutScopedKey`).
   */
  key: string | undefined;
  /** The payment a retry answers instead of starting another, or null. */
  earlier: Transaction | null;
}

/**
 * The newest payment (not a capture or refund whose own request used the key) of each merchant's
 * idempotency-key, within the key's retention, that did not end without money (nor was its money
 * refunded at once): the 1-based position of each key that has one, and its id.
 */
const LIVE_PAYMENTS_OF_KEYS = `
  SELECT k.i::int AS i, p.id
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(merchant_id, key, i)
   CROSS JOIN LATERAL (
         SELECT id FROM transactions t
          WHERE t.merchant_id = k.merchant_id AND t.idempotency_key = k.key
            AND t.source_transaction_id IS NULL
            AND t.created_at > now() - $3 * interval '1 millisecond' AND t.status <> ALL ($4::text[])
            AND NOT t.refunded_at_once
          ORDER BY t.created_at DESC
          LIMIT 1) p`;

/**
 * Another payment of a key that the acquirer was asked for or that took money and kept it: in
 * flight (`acquirer_pending_since`), or Success not refunded at once. One still waiting for its
 * shopper's 3DS challenge is not: it reaches the acquirer only through this same check, once its
 * challenge is answered. For a batch of payments: the 1-based positions of those that have one.
 */
const CHARGING_PAYMENTS_OF_KEYS = `
  SELECT k.i::int AS i
    FROM unnest($1::text[], $2::text[], $3::uuid[]) WITH ORDINALITY AS k(merchant_id, key, id, i)
   WHERE EXISTS (
         SELECT 1 FROM transactions t
          WHERE t.merchant_id = k.merchant_id AND t.idempotency_key = k.key
            AND t.source_transaction_id IS NULL
            AND t.created_at > now() - $4 * interval '1 millisecond' AND t.id <> k.id
            AND ((t.status = 'Success' AND NOT t.refunded_at_once) OR t.acquirer_pending_since IS NOT NULL))`;

interface KeyLookups {
  live: GroupCommit<[merchantId: string, key: string], string | null>;
  charging: GroupCommit<[merchantId: string, key: string, paymentId: string], boolean>;
}

/**
 * Every request that sends a key asks both look-ups, so those of requests running together are
 * asked in one statement (`GroupCommit`, here for reads), planned for each batch
 * (`queryReplanned`): a prepared statement's cached plan, made while the table was young and had no
 * statistics, walked every payment of the merchant by another index (thousands of rows per request)
 * until the table was analysed.
 */
const keyLookups = new WeakMap<DataSource, KeyLookups>();
const LOOKUP_BATCH = { maxBatch: 64, maxInFlight: 2 };

function keyLookupsOf(dataSource: DataSource): KeyLookups {
  let lookups = keyLookups.get(dataSource);
  if (lookups) return lookups;
  lookups = {
    live: new GroupCommit(async (keys) => {
      const found = await queryReplanned<{ i: number; id: string }>(dataSource, LIVE_PAYMENTS_OF_KEYS, [
        ...columnsOf(keys),
        IDEMPOTENCY_RETENTION_MS,
        NO_MONEY_HELD,
      ]);
      const idAt = new Map(found.map(({ i, id }) => [i, id]));
      return keys.map((_, index) => idAt.get(index + 1) ?? null);
    }, LOOKUP_BATCH),
    charging: new GroupCommit(async (payments) => {
      const found = await queryReplanned<{ i: number }>(dataSource, CHARGING_PAYMENTS_OF_KEYS, [
        ...columnsOf(payments),
        IDEMPOTENCY_RETENTION_MS,
      ]);
      const charging = new Set(found.map(({ i }) => i));
      return payments.map((_, index) => charging.has(index + 1));
    }, LOOKUP_BATCH),
  };
  keyLookups.set(dataSource, lookups);
  return lookups;
}

/**
 * The payment an earlier request with this idempotency-key created and committed, within the key's
 * retention. Its request died or failed before answering (else the key would replay its answer):
 * that payment may be at the acquirer, waiting for its shopper or settled by the recovery, so a retry
 * answers it as it stands now instead of starting a second one. One that ended holding no money
 * (declined, failed) is not answered: it is simply tried again, as a 5xx may be.
 */
export async function retriedPayment(
  dataSource: DataSource,
  payer: PayerResolver,
  actor: PaymentActor,
  idempotencyKey: string | undefined,
  request: CreatePaymentRequest,
): Promise<RetriedPayment> {
  const owner = idempotencyKey ? await keyOwnerOf(payer, actor, idempotencyKey, request) : null;
  if (!owner) return { key: undefined, earlier: null };
  const id = await keyLookupsOf(dataSource).live.submit([owner.merchantId, owner.key]);
  const earlier = id ? await dataSource.getRepository(Transaction).findOneByOrFail({ id }) : null;
  if (earlier) assertSameRequest(earlier, request);
  return { key: owner.key, earlier };
}

/**
 * The merchant whose payments a request's idempotency-key is looked up among, and the key as its
 * payment keeps it. A shopper's (`?checkoutKey=`) is scoped by the checkout key, so it never meets
 * the merchant's own keys nor another order's shopper's; its merchant is its order's, asked of
 * orders before `PayerResolver.resolve` would refuse the order this very payment may hold or have
 * paid. Null when there is nothing to look up (no orderId: `resolve` refuses the request).
 */
async function keyOwnerOf(
  payer: PayerResolver,
  actor: PaymentActor,
  idempotencyKey: string,
  request: CreatePaymentRequest,
): Promise<{ merchantId: string; key: string } | null> {
  if ('merchant' in actor) return { merchantId: actor.merchant.merchantId, key: idempotencyKey };
  if (!request.orderId) return null;
  const { merchantId } = await payer.orderOfCheckoutKey(request.orderId, actor.checkoutKey);
  return { merchantId, key: checkoutScopedKey(actor.checkoutKey, idempotencyKey) };
}

/**
 * A shopper's idempotency-key as its payment keeps it: scoped by the checkout key, which is kept
 * only as its SHA-256 (it is the order's bearer credential, not to be copied into our rows).
 */
export function checkoutScopedKey(checkoutKey: string, idempotencyKey: string): string {
  return `${checkoutScopeOf(checkoutKey)}:${idempotencyKey}`;
}

/**
 * Refuses a retry whose body is not its first request's (422 BYRD900, as the key's stored answer
 * would): once that answer is gone (a 5xx, a lease taken over) nothing else compares them, and the
 * merchant would be told a payment of another amount, method, order or card is this one.
 */
function assertSameRequest(earlier: Transaction, request: CreatePaymentRequest): void {
  const amount = reconcileAmounts(request, request.currency);
  const differs = [
    request.type !== earlier.paymentMethod && 'type',
    (!amount.ok || amount.isoAmount !== earlier.isoAmount) && 'amount',
    request.currency?.toUpperCase() !== earlier.currency.toUpperCase() && 'currency',
    (request.orderId?.toLowerCase() ?? null) !== earlier.orderId && 'orderId',
    request.tokenId !== undefined &&
      request.tokenId.toLowerCase() !== earlier.tokenId?.toLowerCase() &&
      'tokenId',
    request.card !== undefined && maskOf(request.card) !== earlier.maskedCardNumber && 'card',
    request.isPreAuth != null && request.isPreAuth !== earlier.isPreAuth && 'isPreAuth',
    request.mbway !== undefined &&
      request.mbway.phoneNumber !== earlier.asyncDetails?.phoneNumber &&
      'mbway.phoneNumber',
  ].filter(Boolean);
  if (differs.length > 0) {
    throw Refusal.idempotencyKeyReused(
      `This idempotency-key was already used for payment ${earlier.id}, with another ${differs.join(', ')}`,
    );
  }
}

function maskOf(card: NonNullable<CreatePaymentRequest['card']>): string | null {
  try {
    return checkCard(card).masked;
  } catch {
    return null; // not a card the first request could have paid with
  }
}

/**
 * `retriedPayment`'s lookup again, under the lock of the payment's idempotency-key held until
 * `manager`'s transaction ends, for a use case that inserts its payment in that transaction only
 * when this finds none. Two requests of one key that run at once (the first stalled past its key's
 * lease and the merchant's retry took the key over) then make one payment: the later answers it.
 */
export async function retriedPaymentUnderKeyLock(
  manager: EntityManager,
  { merchantId, idempotencyKey }: Pick<Transaction, 'merchantId' | 'idempotencyKey'>,
  request: CreatePaymentRequest,
): Promise<Transaction | null> {
  if (!idempotencyKey) return null;
  await lockKeyInTransaction(manager, 'payments', merchantId, idempotencyKey);
  const [row] = await manager.query<{ id: string }[]>(LIVE_PAYMENTS_OF_KEYS, [
    [merchantId],
    [idempotencyKey],
    IDEMPOTENCY_RETENTION_MS,
    NO_MONEY_HELD,
  ]);
  const earlier = row ? await manager.findOneByOrFail(Transaction, { id: row.id }) : null;
  if (earlier) assertSameRequest(earlier, request);
  return earlier;
}

/**
 * Whether another payment of this payment's idempotency-key, within the key's retention, is being
 * charged or took money. Asked once this one is committed in flight, before the acquirer is: two
 * requests of one key both get that far when the first stalled (a paused replica) past its key's
 * lease and the merchant's retry took the key over, each having found no payment of the key. The
 * second one committed sees the first here and yields, so one at most reaches the acquirer (both
 * yield when both were committed before either looked; the merchant's next retry starts anew). A
 * stalled request's payment that waits for a 3DS challenge nobody will answer stops nothing.
 */
export async function anotherPaymentOfKey(dataSource: DataSource, payment: Transaction): Promise<boolean> {
  if (!payment.idempotencyKey) return false;
  return keyLookupsOf(dataSource).charging.submit([payment.merchantId, payment.idempotencyKey, payment.id]);
}
