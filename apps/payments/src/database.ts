import { Transaction } from './transactions/transaction.entity.js';
import { ThreeDSSession } from './three-ds-server/three-ds-session.entity.js';
import { Chargeback } from './chargebacks/chargeback.entity.js';
import { Payments1763800000200 } from './migrations/1763800000200-payments.js';
import { AsyncPayments1763800000400 } from './migrations/1763800000400-async-payments.js';
import { Chargebacks1763800000410 } from './migrations/1763800000410-chargebacks.js';
import { ThreeDSOpenSessions1763900000500 } from './migrations/1763900000500-three-ds-open-sessions.js';
import { CardVerifications1764300000100 } from './migrations/1764300000100-card-verifications.js';
import { SavedCards1764400000100 } from './migrations/1764400000100-saved-cards.js';
import { WriteAhead1764500000200 } from './migrations/1764500000200-write-ahead.js';
import { PaymentIdempotencyKeys1764700000100 } from './migrations/1764700000100-payment-idempotency-keys.js';
import { TokenVerifications1765100000100 } from './migrations/1765100000100-token-verifications.js';
import { PayIdempotencyKeys1765200000100 } from './migrations/1765200000100-pay-idempotency-keys.js';
import { ChargebackIdempotencyKeys1765200000200 } from './migrations/1765200000200-chargeback-idempotency-keys.js';
import { OpenAsyncPayments1765500000100 } from './migrations/1765500000100-open-async-payments.js';
import { UnpaidTwoStepPayments1765900000100 } from './migrations/1765900000100-unpaid-two-step-payments.js';
import { SealedCardsToSave1766000000100 } from './migrations/1766000000100-sealed-cards-to-save.js';
import { OrderRefusedPayments1766100000100 } from './migrations/1766100000100-order-refused-payments.js';
import { ThreeDSCheckClaims1766100000200 } from './migrations/1766100000200-three-ds-check-claims.js';
import { RefundedAtOnce1766300000100 } from './migrations/1766300000100-refunded-at-once.js';

export const PAYMENTS_ENTITIES = [Transaction, ThreeDSSession, Chargeback];
export const PAYMENTS_MIGRATIONS = [
  Payments1763800000200,
  AsyncPayments1763800000400,
  Chargebacks1763800000410,
  ThreeDSOpenSessions1763900000500,
  CardVerifications1764300000100,
  SavedCards1764400000100,
  WriteAhead1764500000200,
  PaymentIdempotencyKeys1764700000100,
  TokenVerifications1765100000100,
  PayIdempotencyKeys1765200000100,
  ChargebackIdempotencyKeys1765200000200,
  OpenAsyncPayments1765500000100,
  UnpaidTwoStepPayments1765900000100,
  SealedCardsToSave1766000000100,
  OrderRefusedPayments1766100000100,
  ThreeDSCheckClaims1766100000200,
  RefundedAtOnce1766300000100,
];
