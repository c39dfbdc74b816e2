import { Injectable, Logger } from '@nestjs/common';
import { RpcSubjects, type TransactionStatus } from '@byrd/contracts';
import { ApiError, ErrorKind, Rpc } from '@byrd/platform';
import type { Transaction } from '../transactions/transaction.entity.js';

/** Outcomes after which an attempt holds no money, so its order is payable again. */
export const NO_MONEY_HELD: readonly TransactionStatus[] = ['Denied', 'Error', 'Canceled'];

/**
 * The order's side of "one charge per order" (orders owns the lock: rpc.orders.lockPayment). A
 * payment attempt takes its order's lock after its write-ahead row is committed and before the
 * acquirer is asked, and gives it back when it ends holding no money.
 */
@Injectable()
export class OrderLock {
  private readonly logger = new Logger(OrderLock.name);

  constructor(private readonly rpc: Rpc) {}

  /**
   * Takes the order's lock for the transaction. Returns the order's refusal (422 BYRD205: another
   * attempt holds it, or the order is closed) instead of throwing it; any other failure throws.
   */
  async take(transaction: Transaction): Promise<ApiError | null> {
    if (!transaction.orderId) return null;
    try {
      const lock = await this.rpc.call(RpcSubjects.OrdersLockPayment, lockRequest(transaction));
      // Charged only under its own lock: any other answer is a fault, never a go-ahead.
      if (lock.lockedBy !== transaction.id)
        throw new Error(`Order ${transaction.orderId} answered its lock as held by ${lock.lockedBy}`);
      return null;
    } catch (error) {
      if (error instanceof ApiError && error.kind === ErrorKind.BusinessRule) return error;
      throw error;
    }
  }

  /**
   * Gives the lock back at once. Best effort: the attempt's final transaction.* event gives it back
   * durably (orders' ApplyTransactionEvent), this only spares the shopper's next try the wait.
   */
  async release(transaction: Transaction): Promise<void> {
    if (!transaction.orderId) return;
    await this.rpc.call(RpcSubjects.OrdersUnlockPayment, lockRequest(transaction)).catch((error: unknown) => {
      this.logger.warn(
        `Order ${transaction.orderId} not unlocked at once (its event will): ${String(error)}`,
      );
    });
  }
}

function lockRequest(transaction: Transaction) {
  return { orderId: transaction.orderId!, merchantId: transaction.merchantId, transactionId: transaction.id };
}
