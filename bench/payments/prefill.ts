// History for the payments tables, so a run can measure a database as it looks after a day of
// traffic rather than an empty one: `rows` settled payments and, where asked, their 3DS sessions (no
// outbox rows: the relay deletes what it has published). Everything is marked with merchant id
// PREFILL_MERCHANT so the ledger checks leave it out.
import { poolFor } from '../core/environment.js';
import { futureExpiry } from '../core/util.js';

export const PREFILL_MERCHANT = 'bench-prefill';

export async function prefillPayments(url: string, rows: number, { sessions = true } = {}): Promise<void> {
  const pool = poolFor(url, 1);
  try {
    await pool.query(
      `INSERT INTO transactions (id, merchant_id, merchant_mode, order_ref, operation_type, payment_method, status,
         code, description, iso_amount, currency, brand, masked_card_number, card_expiration, holder,
         initiated_from, acquirer, redirect_url, request_id, fingerprint, expires_at, created_at, updated_at)
       SELECT gen_random_uuid(), $2, 'sandbox', 'history-' || g, 'Payment', 'card', 'Success', 'BYRD200',
         'Operation successfully completed', 2500, 'EUR', 'MASTER', '544828******0007', $3, 'Ana Silva',
         'Server', 'SIMULATED', 'https://shop.example.com/return', gen_random_uuid(), gen_random_uuid(),
         now() - interval '2 hours', now() - interval '3 hours', now() - interval '3 hours'
       FROM generate_series(1, $1) g`,
      [rows, PREFILL_MERCHANT, futureExpiry()],
    );
    if (sessions) {
      await pool.query(
        `INSERT INTO three_ds_sessions (id, transaction_id, merchant_id, status, challenge_required, acs_trans_id,
           ds_transaction_id, protocol_version, trans_status, eci, aav, challenge_completed_at, expires_at, created_at, updated_at)
         SELECT gen_random_uuid(), id, merchant_id, 'Authorized', false, gen_random_uuid(), gen_random_uuid(), '2.2.0',
           'Y', '02', 'AAAA', created_at, expires_at, created_at, created_at
         FROM transactions WHERE merchant_id = $1`,
        [PREFILL_MERCHANT],
      );
    }
    await pool.query('VACUUM ANALYZE transactions');
    if (sessions) await pool.query('VACUUM ANALYZE three_ds_sessions');
  } finally {
    await pool.end();
  }
}
