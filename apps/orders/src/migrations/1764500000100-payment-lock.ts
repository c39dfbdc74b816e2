import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One payment attempt at a time per order: `payment_lock_id` is the transaction that may be charging
 * (or holds the money of) the order. Taken atomically before the acquirer is asked, cleared when that
 * attempt ends with no money held; cancel and expiry leave a locked order alone.
 */
export class PaymentLock1764500000100 implements MigrationInterface {
  name = 'PaymentLock1764500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE orders ADD COLUMN payment_lock_id uuid, ADD COLUMN payment_locked_at timestamptz`,
    );
    // Orders paid, or holding a pre-authorisation, before the lock existed are held by that payment.
    await q.query(`
      UPDATE orders o SET payment_lock_id = t.transaction_id, payment_locked_at = now()
        FROM order_transactions t
       WHERE t.order_id = o.id AND t.status = 'Success' AND t.operation_type IN ('Payment', 'PreAuth')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders DROP COLUMN payment_locked_at, DROP COLUMN payment_lock_id`);
  }
}
