import { validateDto } from '../validate.js';
import { CompletePaymentRequest, CreatePaymentRequest } from './payments.dto.js';

const card = { number: '5448 2800 0000 0007', expiration: '12/30', cvv: '123', holder: 'Ana Silva' };
const tokenId = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

const fieldsOf = (plain: unknown): string[] => {
  const result = validateDto(CreatePaymentRequest, plain);
  return result.ok ? [] : result.errors.map((error) => error.field);
};

describe('CreatePaymentRequest', () => {
  const cardPayment = { type: 'card', isoAmount: 1100, currency: 'EUR', orderRef: 'r-1', card };

  it('accepts a card payment and strips spaces from the card number', () => {
    const result = validateDto(CreatePaymentRequest, {
      ...cardPayment,
      isoAmount: '1100',
      redirectUrl: 'http://localhost:3000/back',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.card?.number).toBe('5448280000000007');
    expect(result.value.isoAmount).toBe(1100);
  });

  it('accepts a token payment with an uppercase GUID, lowercasing it', () => {
    const result = validateDto(CreatePaymentRequest, {
      type: 'card',
      amount: '11.00',
      currency: 'EUR',
      tokenId: tokenId.toUpperCase(),
      transactionMode: 'merchantInitiatedRecurring',
      isPreAuth: 'false',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.tokenId).toBe(tokenId);
    expect(result.value.isPreAuth).toBe(false);
  });

  it('takes a card or a token, not both; neither is the first step of a two-step payment', () => {
    const { card: _card, ...noCard } = cardPayment;
    expect(validateDto(CreatePaymentRequest, noCard).ok).toBe(true);
    expect(validateDto(CreatePaymentRequest, { ...cardPayment, tokenId })).toEqual({
      ok: false,
      errors: [{ field: 'tokenId', message: 'tokenId and card cannot be sent together' }],
    });
  });

  it('checks the card shape only (no Luhn here)', () => {
    expect(fieldsOf({ ...cardPayment, card: { ...card, number: '4111111111111112' } })).toEqual([]);
    expect(fieldsOf({ ...cardPayment, card: { ...card, number: '41111111111' } })).toEqual(['card.number']);
    expect(fieldsOf({ ...cardPayment, card: { ...card, number: '4111-1111-1111-1111' } })).toEqual([
      'card.number',
    ]);
    expect(fieldsOf({ ...cardPayment, card: { ...card, expiration: '13/30' } })).toEqual(['card.expiration']);
    expect(fieldsOf({ ...cardPayment, card: { ...card, expiration: '12/2030' } })).toEqual([
      'card.expiration',
    ]);
    expect(fieldsOf({ ...cardPayment, card: { ...card, cvv: '12' } })).toEqual(['card.cvv']);
    expect(fieldsOf({ ...cardPayment, card: 'nope' })).toEqual(['card']);
  });

  it('refuses a nested object sent as an array or a scalar, naming it', () => {
    for (const wrong of [[], [card], 'card', 5]) {
      const result = validateDto(CreatePaymentRequest, { ...cardPayment, card: wrong });
      expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(['card']);
      expect(result.ok ? '' : result.errors[0].message).toContain('card must be an object');
    }
  });

  it('refuses an amount as long as a string may be, in linear time, naming the field', () => {
    // Validated before the API key is looked at (a checkout key is enough to be read at all).
    const started = performance.now();
    for (const amount of ['1'.repeat(60_000), `1.${'0'.repeat(60_000)}1`]) {
      const result = validateDto(CreatePaymentRequest, { type: 'card', currency: 'EUR', amount });
      expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(['amount']);
    }
    expect(performance.now() - started).toBeLessThan(1_000); // a hundred times the linear reading
  });

  it('refuses a body of 80,000 property names, or an array of items for the card, without reading each', () => {
    // Their cost grows with the square of the keys or items once a field fails: seconds of CPU.
    const started = performance.now();
    const keys = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1]));
    const manyKeys = validateDto(CreatePaymentRequest, { ...keys, type: 'nope' });
    expect(manyKeys).toEqual({
      ok: false,
      errors: [{ field: '', message: 'has more than 1000 properties' }],
    });
    const cards = validateDto(CreatePaymentRequest, {
      type: 'card',
      currency: 'EUR',
      amount: '1.00',
      card: new Array(100_000).fill({}),
    });
    expect(cards).toEqual({ ok: false, errors: [{ field: 'card', message: 'has more than 1000 items' }] });
    // Under that limit, an array for the card is one error: its items are not validated each.
    const items = validateDto(CreatePaymentRequest, {
      type: 'card',
      currency: 'EUR',
      amount: '1.00',
      card: new Array(1_000).fill({}),
    });
    expect(items.ok ? [] : items.errors).toEqual([
      { field: 'card', message: expect.stringContaining('card must be an object') },
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('validates type, transaction mode and ids', () => {
    expect(fieldsOf({ ...cardPayment, type: 'paypal' })).toEqual(['type']);
    expect(fieldsOf({ ...cardPayment, transactionMode: 'None' })).toEqual(['transactionMode']);
    expect(fieldsOf({ ...cardPayment, orderId: 'order-1' })).toEqual(['orderId']);
    expect(fieldsOf({ ...cardPayment, isoAmount: undefined })).toEqual(['amount']);
  });
});

describe('CreatePaymentRequest for async methods', () => {
  const multibanco = { type: 'multibanco', amount: '25.00', currency: 'EUR' };
  const mbway = { type: 'mbway', amount: '25.00', currency: 'EUR', mbway: { phoneNumber: '912 345 678' } };

  it('takes a multibanco payment without a card', () => {
    expect(validateDto(CreatePaymentRequest, multibanco).ok).toBe(true);
  });

  it('takes an mbway payment with the phone normalised to E.164', () => {
    const result = validateDto(CreatePaymentRequest, mbway);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.mbway?.phoneNumber).toBe('+351912345678');
    expect(result.value.card).toBeUndefined();
  });

  it('requires the mbway phone and names the field when it is not a mobile MB WAY can reach', () => {
    expect(validateDto(CreatePaymentRequest, { ...mbway, mbway: undefined })).toEqual({
      ok: false,
      errors: [{ field: 'mbway', message: 'mbway.phoneNumber is required for type mbway' }],
    });
    expect(fieldsOf({ ...mbway, mbway: {} })).toEqual(['mbway.phoneNumber']);
    expect(fieldsOf({ ...mbway, mbway: { phoneNumber: '212345678' } })).toEqual(['mbway.phoneNumber']);
    expect(fieldsOf({ ...mbway, mbway: { phoneNumber: '12345' } })).toEqual(['mbway.phoneNumber']);
  });

  it('refuses card fields on async types and mbway details on others', () => {
    expect(validateDto(CreatePaymentRequest, { ...multibanco, card })).toEqual({
      ok: false,
      errors: [{ field: 'card', message: 'card is not allowed when type is "multibanco"' }],
    });
    expect(fieldsOf({ ...mbway, tokenId })).toEqual(['tokenId']);
    expect(fieldsOf({ ...multibanco, transactionMode: 'initialRecurring' })).toEqual(['transactionMode']);
    expect(fieldsOf({ ...multibanco, mbway: { phoneNumber: '912345678' } })).toEqual(['mbway']);
    expect(
      fieldsOf({ type: 'card', isoAmount: 1100, currency: 'EUR', card, mbway: { phoneNumber: '912345678' } }),
    ).toEqual(['mbway']);
  });
});

describe('CompletePaymentRequest', () => {
  it('accepts a card or a token, not both', () => {
    expect(validateDto(CompletePaymentRequest, { card }).ok).toBe(true);
    expect(validateDto(CompletePaymentRequest, { tokenId }).ok).toBe(true);
    expect(validateDto(CompletePaymentRequest, { card, tokenId }).ok).toBe(false);
  });
});
