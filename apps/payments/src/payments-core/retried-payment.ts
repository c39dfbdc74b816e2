import { DataSource, type EntityManager } from 'typeorm';
import { reconcileAmounts, type CreatePaymentRequest } from '@byrd/contracts';
import {
  checkCard,
  IDEMPOTENCY_RETENTION_MS,
  lockKeyInTransaction,
  queryReplanned,
  Refusal,
} from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';
import { NO_MONEY_HELD } from './order-lock.js';
import type { PaymentActor } from './payer.js';

export interface RetriedPayment {
  /** The key to keep on a new payment: the merchant's own (a checkout key's requests are the shopper's). */
  key: string | undefined;
  /** The payment a retry answers instead of starting another, or null. */
  earlier: Transaction | null;
}

/**
 * The newest payment (not a capture or refund whose own request used the key) of a merchant's
 * idempotency-key, within the key's retention, that did not end without money. Every request that
 * sends a key asks it, planned for each call (`queryReplanned`): a prepared statement's cached plan,
 * made while the table was young and had no statistics, may walk every payment of the merchant by
 * another of its indexes (seen: thousands of rows read per request) until the table is analyzed.
 */
const LIVE_PAYMENT_OF_KEY = `
  SELECT id FROM transactions
   WHERE merchant_id = $1 AND idempotency_key = $2 AND source_transaction_id IS NULL
     AND created_at > now() - $3 * interval '1 millisecond' AND status <> ALL ($4::text[])
   ORDER BY created_at DESC
   LIMIT 1`;

const livePaymentOfKeyValues = (merchantId: string, idempotencyKey: string) => [
  merchantId,
  idempotencyKey,
  IDEMPOTENCY_RETENTION_MS,
  NO_MONEY_HELD,
];

async function livePaymentOfKey(
  dataSource: DataSource,
  merchantId: string,
  idempotencyKey: string,
): Promise<string | null> {
  const values = livePaymentOfKeyValues(merchantId, idempotencyKey);
  const [row] = await queryReplanned<{ id: string }>(dataSource, LIVE_PAYMENT_OF_KEY, values);
  return row?.id ?? null;
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
  actor: PaymentActor,
  idempotencyKey: string | undefined,
  request: CreatePaymentRequest,
): Promise<RetriedPayment> {
  const merchantId = 'merchant' in actor ? actor.merchant.merchantId : null;
  if (!merchantId || !idempotencyKey) return { key: undefined, earlier: null };
  const id = await livePaymentOfKey(dataSource, merchantId, idempotencyKey);
  const earlier = id ? await dataSource.getRepository(Transaction).findOneByOrFail({ id }) : null;
  if (earlier) assertSameRequest(earlier, request);
  return { key: idempotencyKey, earlier };
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
  const [row] = await manager.query<{ id: string }[]>(
    LIVE_PAYMENT_OF_KEY,
    livePaymentOfKeyValues(merchantId, idempotencyKey),
  );
  const earlier = row ? await manager.findOneByOrFail(Transaction, { id: row.id }) : null;
  if (earlier) assertSameRequest(earlier, request);
  return earlier;
}

/**
 * Another payment of a key that the acquirer was asked for or that took money: in flight
 * (`acquirer_pending_since`) or Success. One still waiting for its shopper's 3DS challenge is not:
 * it reaches the acquirer only through this same check, once its challenge is answered.
 */
const CHARGING_PAYMENT_OF_KEY = `
  SELECT 1 FROM transactions
   WHERE merchant_id = $1 AND idempotency_key = $2 AND source_transaction_id IS NULL
     AND created_at > now() - $3 * interval '1 millisecond' AND id <> $4
     AND (status = 'Success' OR acquirer_pending_since IS NOT NULL)
   LIMIT 1`;

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
  // Planned for each call, as LIVE_PAYMENT_OF_KEY.
  const rows = await queryReplanned(dataSource, CHARGING_PAYMENT_OF_KEY, [
    payment.merchantId,
    payment.idempotencyKey,
    IDEMPOTENCY_RETENTION_MS,
    payment.id,
  ]);
  return rows.length > 0;
}
