import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * A chargeback whose money is with the cardholder, or may go back to them: open, or lost. A won one
 * gave it back, and so did one closed without a resolution (withdrawn).
 */
const HOLDS_MONEY = `(status IN ('Created', 'Disputing', 'PendingAction') OR resolution = 'Lost')`;

/**
 * The chargebacks table, read for how much of a transaction's money chargebacks hold. Each query runs
 * in the caller's database transaction (`manager`), under the row locks the caller took.
 */
@Injectable()
export class ChargebackRepository {
  /**
   * Minor units of the chargebacks open or lost on the money of a transaction: on itself, or on its
   * captures (a pre-authorisation's money is its captures'). A refund must leave that money alone.
   */
  async openOrLostOn(manager: EntityManager, merchantId: string, transactionId: string): Promise<number> {
    const [row] = await manager.query<{ iso_amount: string }[]>(
      `SELECT coalesce(sum(iso_amount), 0) AS iso_amount FROM chargebacks
       WHERE merchant_id = $1 AND ${HOLDS_MONEY}
         AND (transaction_id = $2 OR transaction_id IN (
           SELECT id FROM transactions
           WHERE source_transaction_id = $2 AND operation_type = 'Capture' AND merchant_id = $1))`,
      [merchantId, transactionId],
    );
    return Number(row.iso_amount);
  }

  /** Minor units disputed on a payment or capture by chargebacks that hold its money (HOLDS_MONEY). */
  disputedOn(manager: EntityManager, merchantId: string, transactionId: string): Promise<number> {
    return this.disputed(manager, 'transaction_id = $1', transactionId, merchantId);
  }

  /** The same, summed over every capture of a pre-authorisation. */
  disputedOnCapturesOf(manager: EntityManager, merchantId: string, preAuthId: string): Promise<number> {
    return this.disputed(
      manager,
      `transaction_id IN (SELECT id FROM transactions WHERE source_transaction_id = $1 AND operation_type = 'Capture')`,
      preAuthId,
      merchantId,
    );
  }

  private async disputed(manager: EntityManager, where: string, id: string, merchantId: string) {
    const [{ disputed }] = await manager.query<{ disputed: string }[]>(
      `SELECT coalesce(sum(iso_amount), 0) AS disputed FROM chargebacks
        WHERE ${where} AND merchant_id = $2 AND ${HOLDS_MONEY}`,
      [id, merchantId],
    );
    return Number(disputed);
  }
}
