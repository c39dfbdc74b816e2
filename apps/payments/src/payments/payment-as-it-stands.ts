import type { DataSource } from 'typeorm';
import type { PaymentResponse } from '@byrd/contracts';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { presentPayment } from '../transactions/transaction.presenter.js';
import type { CardCharge } from './card-charge.js';

/**
 * A card payment as the request that started it would have answered it, now: with its 3DS data, and
 * while its shopper has not answered the challenge, the `action.url` that sends them there. What a
 * retry gets whose first answer was lost.
 */
export async function paymentAsItStands(
  dataSource: DataSource,
  charge: CardCharge,
  payment: Transaction,
): Promise<PaymentResponse> {
  const session = await dataSource.getRepository(ThreeDSSession).findOneBy({ transactionId: payment.id });
  const challengeOpen =
    session !== null && session.challengeRequired && session.challengeCompletedAt === null;
  return presentPayment(payment, session, challengeOpen ? charge.actionUrl(session.id) : null);
}
