import { randomUUID } from 'node:crypto';
import { applyOutcome } from '../src/transactions/outcome.js';
import { Transaction } from '../src/transactions/transaction.entity.js';
import { PaymentsMedium } from './medium.js';

/** TransactionRepository's own queries on a real PostgreSQL (medium tier). */
describe('TransactionRepository (medium)', () => {
  let medium: PaymentsMedium;

  beforeAll(async () => (medium = await PaymentsMedium.start()));
  afterAll(() => medium?.close());

  it('claims the acquirer calls in flight past the delay, oldest first, once per lease', async () => {
    const merchantId = `merchant-${randomUUID()}`;
    const inFlight = async (sentMsAgo: number) => {
      const transaction = await medium.settled(merchantId, 'Payment', 5000);
      applyOutcome(transaction, 'Processing', 'BYRD201');
      transaction.acquirerPendingSince = new Date(Date.now() - sentMsAgo);
      await medium.dataSource.transaction((manager) => medium.transactions.saveOutcome(manager, transaction));
      return transaction.id;
    };
    const oldest = await inFlight(600_000);
    const older = await inFlight(300_000);
    const recent = await inFlight(1_000);
    await medium.settled(merchantId, 'Payment', 5000); // answered: never claimed

    expect(await medium.transactions.claimCallsInFlight(60_000, 1)).toEqual([oldest]);
    expect(await medium.transactions.claimCallsInFlight(60_000, 10)).toEqual([older]);
    // Claiming renewed their lease: nothing is due again until the delay passes anew.
    expect(await medium.transactions.claimCallsInFlight(60_000, 10)).toEqual([]);
    expect(await medium.transactions.claimCallsInFlight(0, 10)).toEqual(
      expect.arrayContaining([oldest, older, recent]),
    );
  });

  it("finds a token's card verification by its id, and nothing else by that name", async () => {
    const merchantId = `merchant-${randomUUID()}`;
    const verification = await medium.settled(merchantId, 'Payment', 100);
    await medium.dataSource
      .getRepository(Transaction)
      .update({ id: verification.id }, { operationType: 'Verification' });
    const payment = await medium.settled(merchantId, 'Payment', 5000);
    expect(await medium.transactions.verification(verification.id)).toMatchObject({
      id: verification.id,
      status: 'Success',
    });
    expect(await medium.transactions.verification(payment.id)).toBeNull();
  });
});
