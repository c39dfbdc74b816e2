import { DataSource, IsNull } from 'typeorm';
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
