import { DataSource } from 'typeorm';
import { futureExpiry } from '@byrd/platform/testing';
import { describeFuzzing } from '@byrd/platform/testing/fuzz';
import { PaymentsHarness } from './harness.js';

const card = { number: '4242424242424242', expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' };
const payment = {
  type: 'card',
  amount: '25.00',
  currency: 'EUR',
  orderRef: 'fuzz-1',
  redirectUrl: 'https://shop.example.com/return',
  card,
};
/** Browser pages (HTML, form posts): their errors are pages, not the JSON body; they must still never fail. */
const PAGES = /^(GET|POST) \/3ds\/(authenticate|acs|sdk|notification)/;

describeFuzzing(
  'payments',
  async () => {
    const h = await PaymentsHarness.start();
    const made = [
      await h.pay(card.number),
      await h.pay(card.number, { isPreAuth: true, amount: '900.00' }),
      await h.pay('4000000000003220'), // waiting for its 3DS challenge
      await h.pay(card.number, { card: undefined }), // the first step of a two-step payment
    ];
    const transactionIds = made.map((answer) => answer.body.transactionId as string);
    return {
      baseUrl: h.paymentsUrl,
      databaseUrl: (h.payments.get(DataSource).options as { url: string }).url,
      options: {
        headers: { 'x-api-key': h.merchant.apiKey },
        examples: {
          'POST /api/v2/payment': [payment, { ...payment, isPreAuth: true }],
          'POST /api/v2/payment/{transactionId}/pay': [{ card }],
          'POST /api/v2/capture/{transactionId}': [{ isoAmount: 100 }, { amount: '1.00' }],
          'POST /api/v2/refund/{transactionId}': [{ isoAmount: 100 }],
          'POST /api/v2/release/{transactionId}': [{ isoAmount: 100 }, {}],
          'POST /api/v2/sandbox/chargebacks': [{ transactionId: transactionIds[0] }],
        },
        pathValues: { transactionId: transactionIds, id: transactionIds },
        pages: (operation) => PAGES.test(operation),
      },
      mustSee: [201, 400],
      stop: () => h.stop(),
    };
  },
);
