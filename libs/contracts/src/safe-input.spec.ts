import { CreateOrderRequest } from './dto/orders.dto.js';
import { CreatePaymentRequest } from './dto/payments.dto.js';
import {
  isStorableText,
  MAX_INPUT_DEPTH,
  MAX_INPUT_ENTRIES,
  MAX_INPUT_STRING,
  MAX_INPUT_VALUES,
  refusedInputFields,
} from './safe-input.js';
import { validateDto } from './validate.js';

const HIGH = '\uD83D'; // first half of 😀
const LOW = '\uDE00'; // second half of 😀

describe('isStorableText', () => {
  it.each([
    ['plain ASCII', 'Ana Silva'],
    ['accents and CJK', 'José 山田'],
    ['a well-formed surrogate pair (emoji)', `smile ${HIGH}${LOW}`],
    ['the empty string', ''],
    ['other control characters', 'tab\there\u0001'],
  ])('accepts %s', (_, value) => {
    expect(isStorableText(value)).toBe(true);
  });

  it.each([
    ['a NUL byte', 'Ana\u0000Silva'],
    ['a lone high surrogate at the end', `Ana${HIGH}`],
    ['a lone high surrogate before a letter', `${HIGH}a`],
    ['a lone low surrogate', `${LOW}Ana`],
    ['a reversed pair', `${LOW}${HIGH}`],
  ])('refuses %s', (_, value) => {
    expect(isStorableText(value)).toBe(false);
  });
});

describe('refusedInputFields', () => {
  it('returns nothing for clean input of any shape', () => {
    expect(
      refusedInputFields({
        a: 'x',
        n: 1,
        b: true,
        z: null,
        list: ['y', { deep: [`${HIGH}${LOW}`] }],
        metadata: { 'clé 😀': 'v' },
      }),
    ).toEqual([]);
    expect(refusedInputFields(undefined)).toEqual([]);
    expect(refusedInputFields(42)).toEqual([]);
  });

  it('names nested fields, array items and free-form metadata by their dotted path', () => {
    const fields = refusedInputFields({
      orderRef: 'r\u0000',
      card: { holder: 'A\u0000' },
      items: ['ok', `bad${LOW}`],
      metadata: { note: `x${HIGH}`, nested: { list: [{ deeper: '\u0000' }] } },
    });
    expect(fields.map((f) => f.field)).toEqual([
      'card.holder',
      'items.1',
      'metadata.nested.list.0.deeper',
      'metadata.note',
      'orderRef',
    ]);
    expect(fields.find((f) => f.field === 'card.holder')!.message).toMatch(/NUL/);
    expect(fields.find((f) => f.field === 'metadata.note')!.message).toMatch(/surrogate/);
  });

  it('checks property names, reporting the object that holds a bad one', () => {
    expect(refusedInputFields({ metadata: { 'k\u0000': 'v', [`k${HIGH}`]: 'w' } })).toEqual([
      { field: 'metadata', message: expect.stringMatching(/property name .*NUL/) },
      { field: 'metadata', message: expect.stringMatching(/property name .*surrogate/) },
    ]);
  });

  it('names a single value (query or path parameter) by the base path', () => {
    expect(refusedInputFields('a\u0000', 'orderRef')).toEqual([
      { field: 'orderRef', message: expect.stringMatching(/NUL/) },
    ]);
    expect(refusedInputFields({ orderRef: 'a\u0000' }, 'query')[0].field).toBe('query.orderRef');
  });

  it('refuses input nested deeper than the limit, without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_INPUT_DEPTH + 5; i++) deep = { d: deep };
    expect(refusedInputFields({ metadata: deep })).toEqual([
      {
        field: expect.stringMatching(/^metadata(\.d)+$/),
        message: expect.stringMatching(/nested too deeply/),
      },
    ]);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_INPUT_DEPTH - 2; i++) ok = [ok];
    expect(refusedInputFields({ m: ok })).toEqual([]);
  });

  it('walks dictionaries without a prototype, as query string parsers make them', () => {
    const nullPrototype = Object.assign(Object.create(null) as object, { orderRef: 'a\u0000' });
    function Empty() {}
    Empty.prototype = Object.create(null) as object; // fast-querystring (Fastify's query strings)
    const querystring = Object.assign(new (Empty as unknown as new () => object)(), { orderRef: 'b\u0000' });
    expect(refusedInputFields(nullPrototype)[0]?.field).toBe('orderRef');
    expect(refusedInputFields(querystring)[0]?.field).toBe('orderRef');
  });

  it('does not walk class instances (dates, buffers)', () => {
    expect(refusedInputFields({ at: new Date(), raw: Buffer.from([0]) })).toEqual([]);
  });

  it('refuses an object or array past MAX_INPUT_ENTRIES, naming it, and takes one at the limit', () => {
    const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(refusedInputFields({ metadata: entries(MAX_INPUT_ENTRIES) })).toEqual([]);
    expect(refusedInputFields({ metadata: entries(MAX_INPUT_ENTRIES + 1) })).toEqual([
      { field: 'metadata', message: `has more than ${MAX_INPUT_ENTRIES} properties` },
    ]);
    expect(refusedInputFields({ card: new Array(MAX_INPUT_ENTRIES + 1).fill({}) })).toEqual([
      { field: 'card', message: `has more than ${MAX_INPUT_ENTRIES} items` },
    ]);
    expect(refusedInputFields(entries(MAX_INPUT_ENTRIES + 1), 'query')[0].field).toBe('query');
  });

  it('refuses more than MAX_INPUT_VALUES values in all, however they are spread', () => {
    const spread = (objects: number) =>
      Object.fromEntries(
        Array.from({ length: objects }, (_, o) => [
          `o${o}`,
          Object.fromEntries(Array.from({ length: MAX_INPUT_ENTRIES - 2 }, (_, i) => [`k${i}`, i])),
        ]),
      );
    const within = Math.floor(MAX_INPUT_VALUES / MAX_INPUT_ENTRIES);
    expect(refusedInputFields({ metadata: spread(within) })).toEqual([]);
    expect(refusedInputFields({ metadata: spread(within + 1) })).toEqual([
      { field: '', message: `has more than ${MAX_INPUT_VALUES} values in all` },
    ]);
  });

  it('refuses a string longer than MAX_INPUT_STRING, as a value or a property name', () => {
    const long = 'x'.repeat(MAX_INPUT_STRING + 1);
    expect(refusedInputFields({ holder: 'x'.repeat(MAX_INPUT_STRING) })).toEqual([]);
    expect(refusedInputFields({ card: { holder: long } })).toEqual([
      { field: 'card.holder', message: `is longer than ${MAX_INPUT_STRING} characters` },
    ]);
    expect(refusedInputFields({ metadata: { [long]: 1 } })).toEqual([
      {
        field: 'metadata',
        message: `has a property name that is longer than ${MAX_INPUT_STRING} characters`,
      },
    ]);
  });

  it('reports at most 20 problems', () => {
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, '\u0000']));
    expect(refusedInputFields(many)).toHaveLength(20);
  });
});

describe('validateDto refuses unstorable text before building the DTO', () => {
  const card = { number: '5448280000000007', expiration: '12/30', cvv: '123', holder: 'Ana Silva' };

  it('names card.holder and orderRef of a payment', () => {
    const result = validateDto(CreatePaymentRequest, {
      type: 'card',
      isoAmount: 1100,
      currency: 'EUR',
      orderRef: 'r\u0000',
      card: { ...card, holder: 'Ana\u0000' },
    });
    expect(result).toEqual({
      ok: false,
      errors: [
        { field: 'card.holder', message: expect.stringMatching(/NUL/) },
        { field: 'orderRef', message: expect.stringMatching(/NUL/) },
      ],
    });
  });

  it('names metadata.note of an order', () => {
    const result = validateDto(CreateOrderRequest, {
      amount: '10.00',
      currency: 'EUR',
      metadata: { note: `x${LOW}y` },
    });
    expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(['metadata.note']);
  });

  it('refuses a field the DTO would strip too (it is part of the request)', () => {
    const result = validateDto(CreatePaymentRequest, {
      type: 'card',
      isoAmount: 1100,
      currency: 'EUR',
      card,
      unknownExtra: '\u0000',
    });
    expect(result.ok ? [] : result.errors.map((e) => e.field)).toEqual(['unknownExtra']);
  });

  it('still accepts clean input (emoji included)', () => {
    const result = validateDto(CreatePaymentRequest, {
      type: 'card',
      isoAmount: 1100,
      currency: 'EUR',
      orderRef: `r-😀`,
      card,
    });
    expect(result.ok).toBe(true);
  });
});
