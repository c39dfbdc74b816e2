// Reusable transform + validation decorators for the request DTOs. Transforms run in
// plainToInstance (Nest's ValidationPipe with `transform: true`), validators in validate().
import 'reflect-metadata';
import { Exclude, Expose, plainToInstance, Transform, Type, type ClassConstructor } from 'class-transformer';
import {
  IsUrl,
  MaxLength,
  ValidateBy,
  ValidateNested,
  buildMessage,
  type ValidationOptions,
} from 'class-validator';
import { isOneOf, REQUEST_TRANSACTION_MODES } from './enums.js';
import { cardNumberPaths } from './card-in-text.js';
import { CARD_EXPIRY_PATTERN } from './card-expiry.js';
import { tryParseExpiresIn } from './expires-in.js';
import { isGuid } from './ids.js';
import { normalizeMbWayPhone } from './phone.js';
import { TRANSFORM_OPTIONS } from './validate.js';
import {
  currencyExponent,
  DECIMAL_AMOUNT_PATTERN,
  isKnownCurrency,
  MAX_ISO_AMOUNT,
  MoneyError,
  toIsoAmount,
} from './money.js';

/** Applies several property decorators as one. */
export function composeDecorators(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, propertyKey) => {
    for (const decorator of decorators) decorator(target, propertyKey);
  };
}

/**
 * A nested request object (`Card`, `shopper`). `@ValidateNested` alone lets an array through (it
 * validates each element), and the handler then reads the array as the object: refuse it first.
 * The array is read as a value that is no object before anything validates it, so its items are not
 * validated (a thousand items cost the libraries about as many milliseconds, and an error each).
 */
export function NestedObject(type: () => new () => object): PropertyDecorator {
  return composeDecorators(
    Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? ARRAY_FOR_OBJECT : value)),
    // Absent is the business of IsOptional / IsDefined beside it; here only the shape.
    ValidateBy({
      name: 'isNestedObject',
      validator: {
        validate: (value: unknown) => value == null || (typeof value === 'object' && !Array.isArray(value)),
        defaultMessage: buildMessage((prefix) => `${prefix}$property must be an object`),
      },
    }),
    ValidateNested(),
    Type(type),
  );
}

/** What an array sent for a nested object is read as (never echoed: errors carry no values). */
const ARRAY_FOR_OBJECT = 'an array';

const INTEGER_STRING = /^[+-]?\d+$/;

/** Turns a numeric string ("1000") into a number before validation; other values pass untouched. */
export function ToInteger(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && INTEGER_STRING.test(value.trim()) ? Number(value.trim()) : value,
  );
}

/** Turns "true"/"false" (any case) into booleans before validation. */
export function ToBoolean(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    const normalized = value.trim().toLowerCase();
    return normalized === 'true' ? true : normalized === 'false' ? false : value;
  });
}

/** Turns a JSON number sent for a decimal amount (10.5) into its string form ("10.5"). */
export function ToDecimalString(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'number' && Number.isFinite(value) ? String(value) : value,
  );
}

/** Trims surrounding whitespace of strings. */
export function Trim(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
}

/**
 * A GUID. Uppercase input (.NET clients) is lowercased first, so ids compare as stored.
 * With `{ each: true }` it applies to every item of an array.
 */
export function IsGuid(options?: ValidationOptions): PropertyDecorator {
  const lower = (item: unknown): unknown => (typeof item === 'string' ? item.trim().toLowerCase() : item);
  return composeDecorators(
    Transform(({ value }: { value: unknown }) =>
      options?.each && Array.isArray(value) ? value.map(lower) : lower(value),
    ),
    ValidateBy(
      {
        name: 'isGuid',
        validator: {
          validate: (value: unknown) => isGuid(value),
          defaultMessage: buildMessage((each) => `${each}$property must be a GUID`, options),
        },
      },
      options,
    ),
  );
}

/** An uppercase, known ISO 4217 currency code ("EUR"); "eur" is rejected. */
export function IsCurrencyCode(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCurrencyCode',
      validator: {
        validate: (value: unknown) => isKnownCurrency(value),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be an uppercase ISO 4217 currency code such as EUR`,
          options,
        ),
      },
    },
    options,
  );
}

/** An `isoAmount`: positive integer of minor units up to 2^53 - 1; numeric strings accepted. */
export function IsIsoAmount(options?: ValidationOptions): PropertyDecorator {
  return composeDecorators(
    ToInteger(),
    ValidateBy(
      {
        name: 'isIsoAmount',
        validator: {
          validate: (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0,
          defaultMessage: buildMessage(
            (each) =>
              `${each}$property must be a positive integer of minor units (at most ${MAX_ISO_AMOUNT})`,
            options,
          ),
        },
      },
      options,
    ),
  );
}

/**
 * A positive decimal `amount` string ("10.00"); a JSON number is accepted and stringified.
 * With `currencyProperty`, the amount must also fit that currency's decimals when the
 * currency is valid (an invalid currency is reported on its own property). Absence is left to
 * `@IsDefined()` / `@IsOptional()`, so a missing amount is reported once.
 */
export function IsDecimalAmount(currencyProperty?: string, options?: ValidationOptions): PropertyDecorator {
  const problem = (value: unknown, object: object): string | null => {
    if (typeof value !== 'string' || !DECIMAL_AMOUNT_PATTERN.test(value)) {
      return 'must be a decimal amount string such as "10.00"';
    }
    if (!/[1-9]/.test(value)) return 'must be greater than zero';
    const currency = currencyProperty ? (object as Record<string, unknown>)[currencyProperty] : undefined;
    const known = isKnownCurrency(currency) ? currency : undefined;
    try {
      toIsoAmount(value, known ?? 'CLF'); // without a currency, allow the widest exponent (4)
    } catch (error) {
      if (!(error instanceof MoneyError)) throw error;
      if (error.reason !== 'too-many-decimals') return 'exceeds the largest supported amount';
      return known
        ? `has more decimals than ${known} allows (${currencyExponent(known)})`
        : 'has too many decimals';
    }
    return null;
  };
  return composeDecorators(
    ToDecimalString(),
    ValidateBy(
      {
        name: 'isDecimalAmount',
        validator: {
          validate: (value: unknown, args) => value == null || problem(value, args?.object ?? {}) === null,
          defaultMessage: (args) =>
            `${args?.property ?? 'amount'} ${problem(args?.value, args?.object ?? {})}`,
        },
      },
      options,
    ),
  );
}

/** Card number: 12-19 digits once spaces are removed (the spaces are removed). */
export function IsCardNumber(options?: ValidationOptions): PropertyDecorator {
  return composeDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? value.replace(/\s+/g, '') : value,
    ),
    matches('isCardNumber', /^\d{12,19}$/, 'must be 12 to 19 digits', options),
  );
}

/**
 * Free text (a reference, a cardholder name, an alias, metadata at any depth) must not carry a card
 * number: it would be stored, logged and published in clear, outside the vault.
 */
export function NoCardNumber(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'noCardNumber',
      validator: {
        validate: (value: unknown) => cardNumberPaths(value).length === 0,
        defaultMessage: buildMessage((prefix, args) => {
          const [inner] = cardNumberPaths(args?.value);
          const where = inner ? ` (at ${args?.property}.${inner})` : '';
          return `${prefix}$property must not contain a card number${where}`;
        }, options),
      },
    },
    options,
  );
}

/** Card expiry "MM/YY". */
export function IsCardExpiration(options?: ValidationOptions): PropertyDecorator {
  return matches('isCardExpiration', CARD_EXPIRY_PATTERN, 'must be a MM/YY expiry date', options);
}

/** Card security code: 3 or 4 digits. */
export function IsCvv(options?: ValidationOptions): PropertyDecorator {
  return matches('isCvv', /^\d{3,4}$/, 'must be 3 or 4 digits', options);
}

// Hex (#rgb, #rgba, #rrggbb, #rrggbbaa) or rgb()/rgba()/hsl()/hsla() with plain numbers only:
// strict, because theme values are written into the hosted form's CSS.
const CSS_COLOR =
  /^(#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|(?:rgba?|hsla?)\(\s*\d{1,3}(?:\.\d+)?%?(?:\s*,\s*\d{1,3}(?:\.\d+)?%?){2}(?:\s*,\s*(?:0|1|0?\.\d+|\d{1,3}%))?\s*\))$/;

/** True for a CSS colour the hosted form accepts in its theme. */
export function isCssColor(value: unknown): value is string {
  return typeof value === 'string' && CSS_COLOR.test(value);
}

/** A CSS colour: hex or rgb()/rgba()/hsl()/hsla(). */
export function IsCssColor(options?: ValidationOptions): PropertyDecorator {
  return matches(
    'isCssColor',
    CSS_COLOR,
    'must be a CSS colour such as #1f6feb or rgb(31, 111, 235)',
    options,
  );
}

/**
 * An absolute http(s) URL of at most 2048 characters; `localhost` allowed for sandbox use. No card
 * number in it (a return address `?c=4111...`): it is stored, logged and sent on like any text.
 */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return composeDecorators(
    MaxLength(2048, options),
    NoCardNumber(options),
    IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, options),
  );
}

/** `expiresIn`: "hh:mm:ss" or a number of minutes, > 0 and ≤ 30 days. */
export function IsExpiresIn(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isExpiresIn',
      validator: {
        validate: (value: unknown) => tryParseExpiresIn(value).ok,
        defaultMessage: (args) => {
          const result = tryParseExpiresIn(args?.value);
          return result.ok ? '' : result.message;
        },
      },
    },
    options,
  );
}

/** One of the five transaction modes a caller may send. */
export function IsRequestTransactionMode(options?: ValidationOptions): PropertyDecorator {
  return IsOneOf(REQUEST_TRANSACTION_MODES, options);
}

/** A member of an enum value list, with the allowed values in the message. */
export function IsOneOf(values: readonly string[], options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isOneOf',
      constraints: [values],
      validator: {
        validate: (value: unknown) => isOneOf(values, value),
        defaultMessage: buildMessage(
          (each) => `${each}$property must be one of: ${values.join(', ')}`,
          options,
        ),
      },
    },
    options,
  );
}

/** Fails when this property and `otherProperty` are both sent. */
export function ExclusiveWith(otherProperty: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'exclusiveWith',
      constraints: [otherProperty],
      validator: {
        validate: (value: unknown, args) =>
          value == null || (args?.object as Record<string, unknown> | undefined)?.[otherProperty] == null,
        defaultMessage: buildMessage(
          (each) => `${each}$property and ${otherProperty} cannot be sent together`,
          options,
        ),
      },
    },
    options,
  );
}

/** Fails when this property is sent while `property` does not equal `expected`. */
export function OnlyWhen(property: string, expected: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'onlyWhen',
      constraints: [property, expected],
      validator: {
        validate: (value: unknown, args) =>
          value == null || (args?.object as Record<string, unknown> | undefined)?.[property] === expected,
        defaultMessage: buildMessage(
          (each) => `${each}$property is only allowed when ${property} is "${expected}"`,
          options,
        ),
      },
    },
    options,
  );
}

/** Fails when this property is sent while `property` is one of `values` (e.g. a card on an MB WAY payment). */
export function ForbiddenWhen(
  property: string,
  values: readonly string[],
  options?: ValidationOptions,
): PropertyDecorator {
  const current = (args?: { object?: object }) =>
    (args?.object as Record<string, unknown> | undefined)?.[property];
  return ValidateBy(
    {
      name: 'forbiddenWhen',
      constraints: [property, values],
      validator: {
        validate: (value: unknown, args) => value == null || !isOneOf(values, current(args)),
        defaultMessage: (args) =>
          `${args?.property ?? 'property'} is not allowed when ${property} is "${String(current(args))}"`,
      },
    },
    options,
  );
}

/**
 * A phone number MB WAY can reach: a Portuguese mobile or an international E.164 number,
 * normalised to E.164 (`+351912345678`); see `normalizeMbWayPhone`.
 */
export function IsMbWayPhoneNumber(options?: ValidationOptions): PropertyDecorator {
  return composeDecorators(
    Transform(({ value }: { value: unknown }) => normalizeMbWayPhone(value) ?? value),
    ValidateBy(
      {
        name: 'isMbWayPhoneNumber',
        validator: {
          validate: (value: unknown) => normalizeMbWayPhone(value) !== null,
          defaultMessage: buildMessage(
            (each) =>
              `${each}$property must be a Portuguese mobile number (912345678, +351 912345678) or an international number in E.164 form (+447700900123)`,
            options,
          ),
        },
      },
      options,
    ),
  );
}

/** Other spellings of our payment methods that public clients send (the AI toolkit's `SIBS_MULTIBANCO`). */
const PAYMENT_METHOD_ALIASES: Readonly<Record<string, string>> = { sibs_multibanco: 'multibanco' };

/**
 * A list of payment methods in any case (`["CARD", "MBWAY"]`, as Paybyrd's AI toolkit sends them),
 * read as our lower-case names; anything else is left for the validator to name.
 */
export function ToPaymentMethods(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    Array.isArray(value)
      ? value.map((method: unknown) => {
          if (typeof method !== 'string') return method;
          const lower = method.toLowerCase();
          return PAYMENT_METHOD_ALIASES[lower] ?? lower;
        })
      : value,
  );
}

/** `""` and `null` as absent: clients (the public .NET one) send them for fields they leave out. */
function absent(value: unknown): boolean {
  return value === '' || value == null;
}

/** An empty string or null reads as the field not sent. */
export function EmptyIsAbsent(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (absent(value) ? undefined : value));
}

/** A number (`"storeId": 10`) read as its decimal string; `""` / null as absent. */
export function NumberAsString(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'number' && Number.isFinite(value) ? String(value) : absent(value) ? undefined : value,
  );
}

/**
 * A webhook setting's credential type when the client sends none (or null, or ""): `basic` when a
 * username or password comes with it, else `api-key`.
 */
export function DefaultCredentialType(): PropertyDecorator {
  return composeDecorators(
    Expose(), // decided even when the key is missing
    Transform(({ value, obj }: { value: unknown; obj: Record<string, unknown> }) => {
      if (!absent(value)) return value;
      return !absent(obj.username) || !absent(obj.password) ? 'basic' : 'api-key';
    }),
  );
}

/**
 * Reads the property from a key spelt another way (`IsoAmount`, `iso_amount`, `ISOAMOUNT`) when
 * the canonical name is absent. For fields whose silent loss changes what happens (an operation's
 * amount: without it the whole balance moves), not for every field. Put it above the field's other
 * decorators (it is applied last, so its transform runs first and theirs see the value).
 */
export function FromAnySpelling(): PropertyDecorator {
  const spelling = (name: string) => name.replace(/[-_\s]/g, '').toLowerCase();
  return (target, propertyKey) => {
    const wanted = spelling(String(propertyKey));
    Expose()(target, propertyKey); // transform even when only another spelling was sent
    Transform(({ value, obj }: { value: unknown; obj: Record<string, unknown> }) => {
      if (value !== undefined) return value;
      const key = Object.keys(obj).find((name) => spelling(name) === wanted);
      return key === undefined ? undefined : obj[key];
    })(target, propertyKey);
  };
}

/**
 * Reads the property from `alias` when the canonical name is absent (`ids` or `Ids`), and
 * keeps the alias key itself off the instance, so whitelisting never trips over it. A nested
 * object read from the alias is built as `type` (its own transforms and validation apply).
 */
export function FromAlias(alias: string, type?: ClassConstructor<object>): PropertyDecorator {
  return (target, propertyKey) => {
    Expose()(target, propertyKey); // transform even when only the alias was sent
    Transform(({ value, obj }: { value: unknown; obj: Record<string, unknown> }) => {
      if (value != null) return value;
      const aliased = obj[alias];
      const nested = type && typeof aliased === 'object' && aliased !== null && !Array.isArray(aliased);
      return nested ? plainToInstance(type, aliased, TRANSFORM_OPTIONS) : aliased;
    })(target, propertyKey);
    Exclude()(target, alias);
  };
}

function matches(
  name: string,
  pattern: RegExp,
  sentence: string,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name,
      constraints: [pattern],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && pattern.test(value),
        defaultMessage: buildMessage((each) => `${each}$property ${sentence}`, options),
      },
    },
    options,
  );
}
