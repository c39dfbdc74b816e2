import { toDecimalAmount, type ChargebackResponse } from '@byrd/contracts';
import type { Chargeback } from './chargeback.entity.js';

export function presentChargeback(chargeback: Chargeback): ChargebackResponse {
  return {
    chargebackId: chargeback.id,
    transactionId: chargeback.transactionId,
    orderId: chargeback.orderId,
    status: chargeback.status,
    amount: toDecimalAmount(chargeback.isoAmount, chargeback.currency),
    isoAmount: chargeback.isoAmount,
    currency: chargeback.currency,
    reason: chargeback.reason,
    paymentMethod: chargeback.paymentMethod,
    createdAt: chargeback.createdAt.toISOString(),
    updatedAt: chargeback.updatedAt.toISOString(),
  };
}
