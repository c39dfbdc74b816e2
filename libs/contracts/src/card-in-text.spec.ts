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
    '+4111111111111111', // too long for a phone number
  ])('finds one in %p', (text) => expect(containsCardNumber(text)).toBe(true));

  // Every brand the card checks accept, at the lengths they issue (validator.js knew only some).
  it.each([
    ['Maestro', '5018001111111115'],
    ['Maestro', '6304001111111116'],
    ['Maestro, 12 digits', '501800111111'],
    ['Maestro, 12 digits grouped', 'card 5018 0011 1111'],
    ['Elo', '6363681111111113'],
    ['Elo', '5067171111111116'],
    ['Hipercard', '6062821111111119'],
    ['UnionPay, 19 digits', '6212345678901234567'],
    ['UnionPay, 19 digits grouped', 'ref 6212-3456-7890-1234-567'],
    ['Diners, 14 digits', '36227206271667'],
    ['JCB', '3530111333300000'],
    ['Discover', '6011111111111117'],
  ])('finds a %s number in %p', (_brand, text) => {
    expect(containsCardNumber(text)).toBe(true);
    expect(containsCardNumber(`Ana ${text} Silva`)).toBe(true);
  });

  it.each([
    'ORDER-2026-000123',
    '4111111111111112', // fails Luhn
    '12345678901234567890123', // a longer run is some other number
    '2026112400000001',
    '+351 910 000 000',
    // Phone numbers in international form whose digits would pass as Maestro (57… and 63…, Luhn)
    '+57 300 123 4562',
    '+573001234562',
    'call +63 917 123 4565',
    '50180011111', // 11 digits: no brand issues so few
    '5018001111111116', // Maestro's shape, fails Luhn
    '6062821111111118', // Hipercard's shape, fails Luhn
    '9792000000000003', // Troy (Luhn-valid): a brand we do not accept
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
