import { DataSource, In, IsNull, Not } from 'typeorm';
import { ofIdempotencyKey, Transaction } from '../transactions/transaction.entity.js';
import { NO_MONEY_HELD } from './order-lock.js';
import type { PaymentActor } from './payer.js';

export interface RetriedPayment {
  /** The key to keep on a new payment: the merchant's own (a checkout key's requests are the shopper's). */
  key: string | undefined;
  /** The payment a retry answers instead of starting another, or null. */
  earlier: Transaction | null;
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
): Promise<RetriedPayment> {
  const merchantId = 'merchant' in actor ? actor.merchant.merchantId : null;
  if (!merchantId || !idempotencyKey) return { key: undefined, earlier: null };
  const earlier = await dataSource.getRepository(Transaction).findOne({
    // A payment, not a capture or refund whose own request used the same key.
    where: ofIdempotencyKey(merchantId, idempotencyKey, { sourceTransactionId: IsNull() }),
    order: { createdAt: 'DESC' },
  });
  return {
    key: idempotencyKey,
    earlier: earlier && !NO_MONEY_HELD.includes(earlier.status) ? earlier : null,
  };
}

/**
 * Whether another payment of this payment's idempotency-key, within the key's retention, may be
 * charging or hold money. Asked once this one is committed in flight, before the acquirer is: two
 * requests of one key both get that far when the first stalled (a paused replica) past its key's
 * lease and the merchant's retry took the key over, each having found no payment of the key. The
 * second one committed sees the first here and yields, so one at most reaches the acquirer (both
 * yield when both were committed before either looked; the merchant's next retry starts anew).
 */
export async function anotherPaymentOfKey(dataSource: DataSource, payment: Transaction): Promise<boolean> {
  if (!payment.idempotencyKey) return false;
  return dataSource.getRepository(Transaction).exists({
    where: ofIdempotencyKey(payment.merchantId, payment.idempotencyKey, {
      sourceTransactionId: IsNull(),
      id: Not(payment.id),
      status: Not(In(NO_MONEY_HELD)),
    }),
  });
}
