import { DataSource, MoreThan } from 'typeorm';
import { IDEMPOTENCY_RETENTION_MS } from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';

/**
 * The payment an earlier request with this idempotency-key created and committed, within the key's
 * retention. Its request died or failed before answering (else the key would replay its answer):
 * that payment may be at the acquirer, waiting for its shopper or settled by the recovery, so a retry
 * answers it as it stands now instead of starting a second one.
 */
export function earlierPayment(
  dataSource: DataSource,
  merchantId: string,
  idempotencyKey: string,
): Promise<Transaction | null> {
  return dataSource.getRepository(Transaction).findOne({
    where: {
      merchantId,
      idempotencyKey,
      createdAt: MoreThan(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS)),
    },
    order: { createdAt: 'DESC' },
  });
}
