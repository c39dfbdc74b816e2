import { randomUUID } from 'node:crypto';
import { ErrorKind } from '@byrd/platform';
import { PaymentAuthorizer } from '../src/payments/payment-authorizer.js';
import { applyOutcome } from '../src/transactions/outcome.js';
import { TransactionEventRecorder } from '../src/transactions/transaction-event-recorder.js';
import type { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsMedium } from './medium.js';

const CARD = { number: '5448280000000007', expiration: '12/40', cvv: '123', holder: 'Medium Test' };

/**
 * Two requests of one idempotency-key that both wrote a payment (medium tier, real PostgreSQL and
 * sandbox acquirer ledger). It happens when the first request stalls (its replica paused) between
 * finding no payment of the key and writing its own, past the key's lease, and the merchant's retry
 * takes the key over: each request then commits its payment in flight. At most one may reach the
 * acquirer, or one key charges the card twice.
 */
describe('payments of one idempotency-key written twice (medium)', () => {
  let medium: PaymentsMedium;
  let authorizer: PaymentAuthorizer;

  beforeAll(async () => {
    medium = await PaymentsMedium.start();
    authorizer = medium.authorizer(new TransactionEventRecorder(medium.outbox()));
  });
  afterAll(() => medium?.close());

  /** A payment without an order, committed in flight under `key`, as CreatePayment writes it ahead. */
  async function writtenAhead(merchantId: string, key: string): Promise<Transaction> {
    const payment = medium.orderless(merchantId, 2500, { idempotencyKey: key });
    authorizer.withoutShopper(payment, CARD);
    return medium.insert(payment);
  }
  const charges = (payments: Transaction[]) =>
    medium.dataSource.query<{ reference: string }[]>(
      `SELECT reference FROM sandbox_acquirer_ledger WHERE reference = ANY ($1::uuid[]) AND outcome = 'Success'`,
      [payments.map((p) => p.id)],
    );

  it('sends the later-written payment of a key nowhere when the earlier one is being charged', async () => {
    const merchantId = `merchant-${randomUUID()}`;
    const key = randomUUID();
    // The retry's payment, written and charged first; then the stalled request's own comes.
    const retry = await writtenAhead(merchantId, key);
    expect(await authorizer.authorize(retry, { card: CARD })).toBeNull();
    const stalled = await writtenAhead(merchantId, key);

    const refusal = await authorizer.authorize(stalled, { card: CARD });

    expect(refusal).toMatchObject({ kind: ErrorKind.Conflict, retryAfter: 1 });
    expect(await medium.reload(stalled.id)).toMatchObject({ status: 'Error', acquirerPendingSince: null });
    expect(await medium.reload(retry.id)).toMatchObject({ status: 'Success' });
    expect(await charges([retry, stalled])).toEqual([{ reference: retry.id }]);
  });

  it('charges a key at most once when both payments were written before either was sent', async () => {
    for (let round = 0; round < 10; round++) {
      const merchantId = `merchant-${randomUUID()}`;
      const key = randomUUID();
      const both = [await writtenAhead(merchantId, key), await writtenAhead(merchantId, key)];
      await Promise.all(both.map((payment) => authorizer.authorize(payment, { card: CARD })));
      expect((await charges(both)).length).toBeLessThanOrEqual(1);
    }
  });

  it("charges the retry's payment although the stalled request left one waiting for a 3DS challenge", async () => {
    // The retry answered its shopper with its own challenge; the stalled request then woke and wrote
    // another payment of the key, waiting for a challenge nobody will answer.
    const merchantId = `merchant-${randomUUID()}`;
    const key = randomUUID();
    const orphan = medium.orderless(merchantId, 2500, { idempotencyKey: key });
    applyOutcome(orphan, 'PendingMerchantAction', 'BYRD201');
    await medium.insert(orphan);
    const answered = await writtenAhead(merchantId, key);

    expect(await authorizer.authorize(answered, { card: CARD })).toBeNull();
    expect(await medium.reload(answered.id)).toMatchObject({ status: 'Success' });
    expect(await charges([answered, orphan])).toEqual([{ reference: answered.id }]);
  });

  it('still charges a new payment of a key whose earlier payment ended holding no money', async () => {
    const merchantId = `merchant-${randomUUID()}`;
    const key = randomUUID();
    const declined = await writtenAhead(merchantId, key);
    await medium.dataSource.query(
      `UPDATE transactions SET status = 'Denied', acquirer_pending_since = NULL WHERE id = $1`,
      [declined.id],
    );
    const anew = await writtenAhead(merchantId, key);

    expect(await authorizer.authorize(anew, { card: CARD })).toBeNull();
    expect(await medium.reload(anew.id)).toMatchObject({ status: 'Success' });
  });
});
