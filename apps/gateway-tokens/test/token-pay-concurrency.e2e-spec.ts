import { TokensHarness, vaultKeys } from './harness.js';

const MASTER_FRICTIONLESS = '5448280000000007';
const VISA_FRICTIONLESS = '4242424242424242';
const POOL_SIZE = 3;

/**
 * Two-step payments completed with a token (`POST /payment/{id}/pay {tokenId}`) arriving together,
 * more of them than payments has pooled connections: the vault's and the 3DS server's calls and the
 * token's verification check must not run while a request holds a connection and the payment's row
 * lock, or every connection ends up waiting for another one and the replica stops answering.
 */
describe('two-step token payments, more at once than the pool has connections', () => {
  let h: TokensHarness;

  beforeAll(async () => {
    h = await TokensHarness.start(vaultKeys(), {
      // A pool wait that fails fast, so a starved pool fails the test instead of stalling it.
      paymentsEnv: { DATABASE_POOL_SIZE: String(POOL_SIZE), DATABASE_STATEMENT_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(() => h?.stop());

  it('pays every one of them', async () => {
    const token = await h.createToken({ number: MASTER_FRICTIONLESS });
    // The shopper passes the card's verification (frictionless), so the token may be charged.
    expect((await fetch(token.body.action.url, { redirect: 'manual' })).status).toBe(303);

    for (let round = 0; round < 3; round++) {
      const created = await Promise.all(
        Array.from({ length: POOL_SIZE * 3 }, () =>
          h.call(h.paymentsUrl, 'POST', '/api/v2/payment', {
            type: 'card',
            amount: '25.00',
            currency: 'EUR',
          }),
        ),
      );
      const paid = await Promise.all(
        created.map((payment) =>
          h.call(h.paymentsUrl, 'POST', `/api/v2/payment/${payment.body.transactionId}/pay`, {
            tokenId: token.body.tokenId,
          }),
        ),
      );
      expect(paid.map((answer) => [answer.status, answer.body.status])).toEqual(
        paid.map(() => [200, 'Success']),
      );
    }
  }, 60_000);

  it('pays a payment once when two /pay of it (a token and a card) race, many rounds', async () => {
    const token = await h.createToken({ number: MASTER_FRICTIONLESS });
    expect((await fetch(token.body.action.url, { redirect: 'manual' })).status).toBe(303);
    for (let round = 0; round < 20; round++) {
      const created = await h.call(h.paymentsUrl, 'POST', '/api/v2/payment', {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
      });
      const path = `/api/v2/payment/${created.body.transactionId}/pay`;
      const [byToken, byCard] = await Promise.all([
        h.call(h.paymentsUrl, 'POST', path, { tokenId: token.body.tokenId }),
        h.call(h.paymentsUrl, 'POST', path, {
          card: { number: VISA_FRICTIONLESS, expiration: '12/40', cvv: '123', holder: 'Ana Silva' },
        }),
      ]);
      const answers = [byToken, byCard].map((answer) => answer.status).sort();
      expect(answers).toEqual([200, 422]);
      const won = byToken.status === 200 ? byToken : byCard;
      const lost = byToken.status === 200 ? byCard : byToken;
      expect(lost.body.message).toContain('is not waiting for a card');
      // The payment as stored is the winner's, charged once.
      const stored = await h.call(h.paymentsUrl, 'GET', `/api/v2/transactions/${created.body.transactionId}`);
      expect(stored.body).toMatchObject({ status: 'Success', brand: won.body.brand });
    }
  }, 120_000);
});
