import { cardNumberPaths, containsCardNumber } from './card-in-text.js';
import { validateDto } from './validate.js';
import { CreateOrderRequest } from './dto/orders.dto.js';
import { CreateTokenRequest } from './dto/tokens.dto.js';

describe('card numbers in free text', () => {
  it.each([
    '4111111111111111',
    'order 4111 1111 1111 1111 please',
    'card:5500-0000-0000-0004',
    '378282246310005',
  ])('finds one in %p', (text) => expect(containsCardNumber(text)).toBe(true));

  it.each([
    'ORDER-2026-000123',
    '4111111111111112', // fails Luhn
    '12345678901234567890123', // a longer run is some other number
    '2026112400000001',
    '+351 910 000 000',
    '',
    // GUIDs whose dash-joined digit groups pass the Luhn check (about one in 5,500 did)
    'bench-4f718648-4bf5-4917-8329-8173f2d2546e',
    '51182463-8299-49F5-938E-621FF05ACD1A',
    'order a19863e3-fb6e-48e2-99e4-447482939161',
  ])('leaves %p alone', (text) => expect(containsCardNumber(text)).toBe(false));

  it('still finds a card number beside a GUID', () => {
    expect(containsCardNumber('4f718648-4bf5-4917-8329-8173f2d2546e 4111 1111 1111 1111')).toBe(true);
  });

  it('names where in nested data it sits', () => {
    expect(cardNumberPaths({ note: 'ok', basket: [{ memo: 'pay with 4111111111111111' }] })).toEqual([
      'basket.0.memo',
    ]);
  });

  it('finds it in a JSON number and in a key, without repeating it', () => {
    expect(cardNumberPaths({ x: 4111111111111111, y: 25, z: 12.5 })).toEqual(['x']);
    expect(cardNumberPaths({ basket: { '4111111111111111': 1 } })).toEqual(['basket.<key>']);
    expect(cardNumberPaths(5500000000000004)).toEqual(['']);
  });

  it('refuses it in a "save my card" reference of an order', () => {
    const order = validateDto(CreateOrderRequest, {
      isoAmount: 1000,
      currency: 'EUR',
      paymentOptions: { tokenOptions: { customReference: 'card 4111-1111-1111-1111' } },
    });
    expect(order.ok ? [] : order.errors.map((e) => e.field)).toEqual([
      'paymentOptions.tokenOptions.customReference',
    ]);
  });

  it('refuses it in an order reference or metadata, and in a token alias, naming the field', () => {
    const order = validateDto(CreateOrderRequest, {
      isoAmount: 1000,
      currency: 'EUR',
      orderRef: '4111 1111 1111 1111',
      metadata: { customer: { note: '5500000000000004' } },
    });
    expect(order.ok ? [] : order.errors).toEqual([
      { field: 'orderRef', message: 'orderRef must not contain a card number' },
      { field: 'metadata', message: 'metadata must not contain a card number (at metadata.customer.note)' },
    ]);
    const token = validateDto(CreateTokenRequest, {
      Alias: 'my 4111111111111111',
      Card: { number: '4111111111111111', expiration: '12/30', cvv: '123' },
    });
    expect(token.ok ? [] : token.errors.map((e) => e.field)).toEqual(['Alias']);
  });
});
