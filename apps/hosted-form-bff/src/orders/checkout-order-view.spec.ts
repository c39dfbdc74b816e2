import type { OrderSummary } from '@byrd/contracts';
import { offeredPaymentMethods, toCheckoutOrderView } from './checkout-order-view.js';

const summary: OrderSummary = {
  orderId: '0b0e7b43-6a43-4a1e-9d0e-7f1c2b3a4d5e',
  status: 'created',
  amount: '10.00',
  isoAmount: 1000,
  currency: 'EUR',
  orderRef: null,
  merchantId: 'merchant-1',
  expiresAt: '2030-01-01T00:00:00.000Z',
  redirectUrl: null,
  allowedPaymentMethods: [],
  tokenOptions: null,
  isPreAuth: false,
  paymentLocked: false,
};

describe('the order the page renders', () => {
  it.each([
    [[], ['card', 'multibanco', 'mbway']],
    [
      ['mbway', 'card'],
      ['card', 'mbway'],
    ],
    [['paypal', 'multibanco', 'pix'], ['multibanco']],
    [['paypal'], []],
  ] as const)('offers %j as %j', (allowed, offered) => {
    expect(
      offeredPaymentMethods({ allowedPaymentMethods: [...allowed], currency: 'EUR', isPreAuth: false }),
    ).toEqual(offered);
  });

  // Multibanco and MB WAY settle in full: an order asking for a pre-authorisation is offered card alone.
  it('offers a pre-authorisation order card alone, and one allowing only Multibanco and MB WAY nothing', () => {
    expect(toCheckoutOrderView({ ...summary, isPreAuth: true }, 'x').paymentMethods).toEqual(['card']);
    expect(
      toCheckoutOrderView(
        { ...summary, isPreAuth: true, allowedPaymentMethods: ['multibanco', 'mbway'] },
        'x',
      ).paymentMethods,
    ).toEqual([]);
  });

  // Payments takes Multibanco and MB WAY in euros only: offering them would end in an error.
  it('offers a USD order only card, and an order allowing only them in USD nothing', () => {
    expect(toCheckoutOrderView({ ...summary, currency: 'USD' }, 'x').paymentMethods).toEqual(['card']);
    expect(
      toCheckoutOrderView(
        { ...summary, currency: 'USD', allowedPaymentMethods: ['multibanco', 'mbway'] },
        'x',
      ).paymentMethods,
    ).toEqual([]);
    expect(toCheckoutOrderView({ ...summary, currency: 'EUR' }, 'x').paymentMethods).toEqual([
      'card',
      'multibanco',
      'mbway',
    ]);
  });

  it('offers save card only with a customReference, and names some merchant', () => {
    const view = toCheckoutOrderView(summary, 'https://pay.example/3ds/sdk.js');
    expect(view).toMatchObject({
      saveCardOffered: false,
      merchantName: 'Online store',
      merchantMode: 'sandbox',
      paymentLocked: false,
      authorized: false,
    });
    expect(view).not.toHaveProperty('merchantId');
    expect(toCheckoutOrderView({ ...summary, paymentLocked: true }, 'x').paymentLocked).toBe(true);
    expect(toCheckoutOrderView({ ...summary, authorized: true }, 'x').authorized).toBe(true);
    const offering = toCheckoutOrderView(
      { ...summary, merchantName: 'Acme', merchantMode: 'live', tokenOptions: { customReference: 'c-1' } },
      'https://pay.example/3ds/sdk.js',
    );
    expect(offering).toMatchObject({ saveCardOffered: true, merchantName: 'Acme', merchantMode: 'live' });
    expect(
      toCheckoutOrderView({ ...summary, tokenOptions: { customReference: '' } }, 'x').saveCardOffered,
    ).toBe(false);
  });
});
