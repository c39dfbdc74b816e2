import { describe as describeCode, type ReturnCode, type TransactionStatus } from '@byrd/contracts';
import type { Transaction } from './transaction.entity.js';

/** Sets a transaction's status with its return code and the code's description. */
export function applyOutcome(transaction: Transaction, status: TransactionStatus, code: ReturnCode): void {
  transaction.status = status;
  transaction.code = code;
  transaction.description = describeCode(code);
}
