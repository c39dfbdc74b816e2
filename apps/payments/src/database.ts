import { Transaction } from './transactions/transaction.entity.js';
import { ThreeDSSession } from './three-ds/three-ds-session.entity.js';
import { Payments1763800000200 } from './migrations/1763800000200-payments.js';

export const PAYMENTS_ENTITIES = [Transaction, ThreeDSSession];
export const PAYMENTS_MIGRATIONS = [Payments1763800000200];
