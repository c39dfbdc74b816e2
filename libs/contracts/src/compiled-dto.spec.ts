import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import * as contracts from './index.js';
import { hasCompiledPlan, validInstance } from './compiled-dto.js';
import { TRANSFORM_OPTIONS, VALIDATOR_OPTIONS } from './validate.js';
import { refusedInputFields } from './safe-input.js';
import { ALL_EVENT_NAMES } from './events/catalogue.js';
import { ASYNC_PAYMENT_TYPES, PAYMENT_TYPES, REQUEST_TRANSACTION_MODES } from './enums.js';

// The compiled plan must accept exactly what class-transformer + class-validator accept, and build
// the same instance: same classes, same keys in the same order, same values.

/** Every DTO class of the contracts: an exported class with class-validator rules. */
const DTO_CLASSES = Object.entries(contracts)
  .filter(
    (entry): entry is [string, ClassConstructor<object>] =>
      typeof entry[1] === 'function' &&
      getMetadataStorage().getTargetValidationMetadatas(entry[1], '', false, false).length > 0,
  )
  .sort(([a], [b]) => a.localeCompare(b));

function reference(cls: ClassConstructor<object>, plain: unknown): object | undefined {
  const instance = plainToInstance(cls, plain, TRANSFORM_OPTIONS);
  return validateSync(instance, VALIDATOR_OPTIONS).length === 0 ? instance : undefined;
}

/** Strict structural equality: prototypes, own keys in order, and values (Object.is). */
function sameShape(a: unknown, b: unknown, path = '$'): string | null {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null)
    return Object.is(a, b) ? null : `${path}: ${String(a)} vs ${String(b)}`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: another class`;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.join('\u0000') !== keysB.join('\u0000'))
    return `${path}: keys ${keysA.join()} vs ${keysB.join()}`;
  for (const key of keysA) {
    const problem = sameShape(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
    if (problem) return problem;
  }
  return null;
}

/** Both paths on their own parse of the same JSON text; answers a disagreement, or null. */
function disagreement(cls: ClassConstructor<object>, json: string): string | null {
  // Text the database cannot store is refused before either path runs (validateDto, the HTTP pipe).
  if (refusedInputFields(JSON.parse(json)).length) return null;
  const expected = reference(cls, JSON.parse(json));
  const compiled = validInstance(cls, JSON.parse(json));
  if (expected === undefined && compiled === undefined) return null;
  if (expected === undefined) return `compiled accepted what the libraries refuse: ${json}`;
  // Keys that reach for the prototype are left to the libraries on purpose.
  const handedOver = !hasCompiledPlan(cls) || /"(__proto__|constructor)"/.test(json);
  if (compiled === undefined) return handedOver ? null : `compiled refused a valid input: ${json}`;
  const problem = sameShape(compiled, expected);
  return problem && `${problem} for ${json}`;
}

const guid = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const expiry = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
const card = { number: '5448 2800 0000 0007', expiration: expiry, cvv: '123', holder: ' Ana Silva ' };

/** Values that pass some rule somewhere, and values that broke services before. */
const SCALARS: readonly unknown[] = [
  ...PAYMENT_TYPES,
  ...ASYNC_PAYMENT_TYPES,
  ...REQUEST_TRANSACTION_MODES,
  ...ALL_EVENT_NAMES.slice(0, 6),
  'EUR',
  'eur',
  'USD',
  'JPY',
  '10.00',
  '10.001',
  '0.00',
  ' 25 ',
  10.5,
  1000,
  '1000',
  0,
  -1,
  1.5,
  2 ** 53,
  true,
  false,
  'true',
  'FALSE',
  null,
  '',
  ' ',
  'x'.repeat(300),
  guid,
  guid.toUpperCase(),
  ` ${guid} `,
  '5448280000000007',
  '4111 1111 1111 1111',
  expiry,
  '13/30',
  '123',
  '12345',
  'Ana Silva',
  'ana@example.com',
  'https://example.com/return',
  'http://localhost:3000/back',
  'javascript:alert(1)',
  '00:30:00',
  '30',
  '+351912345678',
  '912 345 678',
  '#1f6feb',
  'rgb(31, 111, 235)',
  'api-key',
  'basic',
  'CARD',
  'sibs_multibanco',
  'a\u0000b',
  '\ud800',
  '😀',
];

const scalar = fc.constantFrom(...SCALARS);
const AWKWARD_KEYS = ['toString', 'valueOf', 'hasOwnProperty', 'unknownField', 'Ids', 'ids', '0'];

/** Property names a class's rules name, for building inputs of its shape. */
function propertiesOf(cls: ClassConstructor<object>): string[] {
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(cls, '', false, false)
    .map((metadata) => metadata.propertyName);
  return [...new Set(names)];
}

/** Objects shaped like a DTO (its property names, nested objects and lists) with values from the pool. */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { weight: 8, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 1, arbitrary: tie('object') },
  ),
  object: fc.oneof(
    { weight: 3, arbitrary: fc.constant(card) },
    { weight: 2, arbitrary: fc.constant({ phoneNumber: '912345678' }) },
    { weight: 2, arbitrary: fc.constant({ firstName: 'Ana', lastName: 'Silva', email: 'ana@example.com' }) },
    {
      weight: 1,
      arbitrary: fc.dictionary(fc.constantFrom('a', 'number', ...AWKWARD_KEYS), tie('value'), { maxKeys: 3 }),
    },
  ),
})).value;

function inputsOf(cls: ClassConstructor<object>): fc.Arbitrary<string> {
  const keys = [...propertiesOf(cls), ...AWKWARD_KEYS];
  return fc
    .tuple(
      fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length }),
      fc.dictionary(fc.constantFrom(...propertiesOf(cls)), scalar, { maxKeys: 4 }),
      fc.constantFrom('', '"__proto__":{"polluted":true}', '"constructor":{"prototype":{}}'),
    )
    .map(([shape, scalars, injected]) => {
      const members = JSON.stringify({ ...shape, ...scalars }).slice(1, -1);
      return `{${[injected, members].filter(Boolean).join(',')}}`;
    });
}

/** Valid requests of the hot paths and their neighbours, to mutate one property at a time. */
const SEEDS: [ClassConstructor<object>, object][] = [
  [contracts.CreatePaymentRequest, { type: 'card', amount: '25.00', currency: 'EUR', orderRef: 'r-1', card }],
  [
    contracts.CreatePaymentRequest,
    { type: 'card', isoAmount: '1100', currency: 'EUR', tokenId: guid.toUpperCase(), isPreAuth: 'true' },
  ],
  [
    contracts.CreatePaymentRequest,
    { type: 'mbway', isoAmount: 500, currency: 'EUR', mbway: { phoneNumber: '912345678' } },
  ],
  [
    contracts.CreateOrderRequest,
    {
      amount: '25.00',
      currency: 'EUR',
      orderRef: 'demo-1',
      expiresIn: '00:30:00',
      shopper: { firstName: 'Ana', lastName: 'Silva', email: 'ana@example.com' },
      orderOptions: { redirectUrl: 'https://example.com/return' },
    },
  ],
  [
    contracts.CreateTokenRequest,
    {
      CustomReference: 'customer-1',
      Card: {
        number: '4242424242424242',
        expiration: expiry,
        cvv: '123',
        holder: 'Ana',
        aav: 'AAABBB',
        eci: '05',
      },
    },
  ],
  [contracts.CaptureRequest, { isoAmount: 6000 }],
  [contracts.RefundRequest, { amount: '35.00' }],
];

describe('the compiled DTO plan', () => {
  it('covers every DTO of the hot paths', () => {
    for (const cls of [
      contracts.CreatePaymentRequest,
      contracts.CreateOrderRequest,
      contracts.CreateTokenRequest,
    ])
      expect(hasCompiledPlan(cls)).toBe(true);
  });

  it.each(SEEDS.map(([cls, seed], i) => [`${cls.name} #${i}`, cls, seed] as const))(
    'builds %s as the libraries do, and agrees with them on every one-property change of it',
    (_name, cls, seed) => {
      expect(validInstance(cls, JSON.parse(JSON.stringify(seed)))).toBeDefined();
      expect(disagreement(cls, JSON.stringify(seed))).toBeNull();
      const keys = [...Object.keys(seed), ...AWKWARD_KEYS];
      fc.assert(
        fc.property(fc.constantFrom(...keys), fc.option(value, { nil: undefined }), (key, replacement) => {
          const changed = JSON.stringify({ ...seed, [key]: replacement });
          expect(disagreement(cls, changed)).toBeNull();
        }),
        { numRuns: 400, seed: 17 },
      );
    },
  );

  let accepted = 0;
  it.each(DTO_CLASSES)('accepts and builds exactly what the libraries do for %s', (_name, cls) => {
    fc.assert(
      fc.property(inputsOf(cls), (json) => {
        expect(disagreement(cls, json)).toBeNull();
        if (!refusedInputFields(JSON.parse(json)).length && validInstance(cls, JSON.parse(json)))
          accepted += 1;
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('was shown valid inputs too, not only refusals', () => {
    expect(accepted).toBeGreaterThan(DTO_CLASSES.length * 10);
  });
});
