import { randomUUID } from 'node:crypto';
import { validateDto } from '../validate.js';
import { CreateOrderRequest } from './orders.dto.js';
import { CreatePaymentRequest } from './payments.dto.js';
import { CreateTokenRequest, ListTokensQuery } from './tokens.dto.js';

describe('CreateTokenRequest', () => {
  const request = {
    Type: 'Card',
    CustomReference: 'customer-7',
    Alias: 'My Visa',
    RedirectUrl: 'https://shop.example.com/3ds-done',
    Card: { number: '4242424242424242', expiration: '01/29', cvv: '123', holder: 'Ana Silva', eci: '05' },
    transactionMode: 'initialUnescheduled',
  };

  it('accepts the PascalCase body of the public API', () => {
    const result = validateDto(CreateTokenRequest, request);
    expect(result.ok).toBe(true);
    expect(result.ok && result.value.Card.number).toBe('4242424242424242');
  });

  it('reports card problems under the PascalCase Card path', () => {
    const result = validateDto(CreateTokenRequest, {
      ...request,
      Card: { ...request.Card, expiration: '1/29', transactionMode: 'sometimes' },
    });
    expect(result.ok ? [] : result.errors.map((error) => error.field)).toEqual([
      'Card.expiration',
      'Card.transactionMode',
    ]);
  });

  it('requires the card and rejects other token types', () => {
    const { Card: _card, ...noCard } = request;
    const result = validateDto(CreateTokenRequest, { ...noCard, Type: 'Iban' });
    expect(result.ok ? [] : result.errors.map((error) => error.field)).toEqual(['Type', 'Card']);
  });

  it('ignores camelCase keys it does not know instead of mistaking them', () => {
    const result = validateDto(CreateTokenRequest, { card: request.Card });
    expect(result).toEqual({ ok: false, errors: [{ field: 'Card', message: 'Card is required' }] });
  });
});

describe('ListTokensQuery', () => {
  it('turns query strings into typed values', () => {
    const result = validateDto(ListTokensQuery, {
      customReference: 'c-7',
      isExpired: 'false',
      pageSize: '50',
    });
    expect(result).toMatchObject({
      ok: true,
      value: { customReference: 'c-7', isExpired: false, pageSize: 50 },
    });
  });

  it('rejects page sizes over 100 and non-boolean flags', () => {
    const result = validateDto(ListTokensQuery, { isExpired: 'yes', pageSize: '500' });
    expect(result.ok ? [] : result.errors.map((error) => error.field).sort()).toEqual([
      'isExpired',
      'pageSize',
    ]);
  });

  it('rejects a page number past 2^53 - 1 (its SQL offset would not be an integer)', () => {
    const huge = validateDto(ListTokensQuery, { pageNumber: '100000000000000000000' });
    expect(huge.ok ? [] : huge.errors.map((error) => error.field)).toEqual(['pageNumber']);
    expect(validateDto(ListTokensQuery, { pageNumber: String(Number.MAX_SAFE_INTEGER) }).ok).toBe(true);
  });
});

describe('return addresses (IsHttpUrl) of tokens, orders and payments', () => {
  const url = 'https://shop.example.com/ret?c=4111111111111111';
  const cases: Array<[string, () => ReturnType<typeof validateDto>, string]> = [
    [
      'a token',
      () =>
        validateDto(CreateTokenRequest, {
          RedirectUrl: url,
          Card: { number: '4242424242424242', expiration: '01/29', cvv: '123' },
        }),
      'RedirectUrl',
    ],
    [
      'an order',
      () =>
        validateDto(CreateOrderRequest, {
          amount: '10.00',
          currency: 'EUR',
          orderOptions: { redirectUrl: url },
        }),
      'orderOptions.redirectUrl',
    ],
    [
      'a payment',
      () =>
        validateDto(CreatePaymentRequest, {
          type: 'card',
          amount: '10.00',
          currency: 'EUR',
          tokenId: randomUUID(),
          redirectUrl: url,
        }),
      'redirectUrl',
    ],
  ];

  it.each(cases)(
    'refuses a card number in the return address of %s, naming the field',
    (_, validate, field) => {
      const result = validate();
      expect(result.ok ? [] : result.errors).toEqual([
        { field, message: `${field.split('.').pop()} must not contain a card number` },
      ]);
      expect(JSON.stringify(result)).not.toContain('4111111111111111');
    },
  );
});
