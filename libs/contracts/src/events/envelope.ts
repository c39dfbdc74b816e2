import { randomUUID } from 'node:crypto';
import { isReturnCode } from '../codes.js';
import { isGuid } from '../ids.js';
import {
  CHARGEBACK_STATUSES,
  INITIATED_FROM_VALUES,
  isOneOf,
  OPERATION_TYPES,
  ORDER_STATUSES,
  PAYMENT_METHODS,
  TRANSACTION_STATUSES,
  type PaymentMethod,
} from '../enums.js';
import { DECIMAL_AMOUNT_PATTERN, isKnownCurrency, MAX_ISO_AMOUNT } from '../money.js';
import { eventFamily, isEventName, type EventFamily, type EventName } from './catalogue.js';
import { referenceIdsOf, type EventContentOf } from './content.js';

/** Envelope of one event, for a single event name. */
export interface EventEnvelopeOf<E extends EventName> {
  /** GUID; also the JetStream msgID, so a re-publish is de-duplicated. */
  id: string;
  /** Event name, also the subject. */
  type: E;
  /** When the change happened, ISO 8601 UTC. */
  occurredAt: string;
  /** Merchant the event belongs to. */
  merchantId: string;
  /** Payment method involved, null when none is (e.g. order.created). */
  paymentMethod: PaymentMethod | null;
  /** Ids the event can be looked up by (order, transaction, chargeback ids). */
  referenceIds: string[];
  /** Content of the event. */
  data: EventContentOf<E>;
}

/**
 * Envelope of the events in `E`. For a union (the default: any event) it is a union of
 * envelopes, so checking `envelope.type` narrows `envelope.data`.
 */
export type EventEnvelope<E extends EventName = EventName> = E extends EventName ? EventEnvelopeOf<E> : never;

/**
 * A malformed envelope; `issues` lists every problem found. `onlyUnknownValues`: every problem is a
 * well-formed value this build's closed sets lack (a return code, a status, a payment method, a
 * currency), as a newer producer sends during a rolling upgrade: a consumer asks such an event again
 * rather than setting it aside, since the replicas that know the value can handle it.
 */
export class EnvelopeError extends Error {
  constructor(
    readonly issues: readonly string[],
    readonly onlyUnknownValues = false,
  ) {
    super(`Malformed event envelope: ${issues.join('; ')}`);
    this.name = 'EnvelopeError';
  }
}

/**
 * Builds an envelope with a fresh id and timestamp; `referenceIds` default to the ids found
 * in `data` (see `referenceIdsOf`).
 */
export function createEnvelope<E extends EventName>(
  type: E,
  fields: {
    merchantId: string;
    data: EventContentOf<E>;
    paymentMethod?: PaymentMethod | null;
    referenceIds?: string[];
    id?: string;
    occurredAt?: Date | string;
  },
): EventEnvelope<E> {
  const { occurredAt = new Date() } = fields;
  const envelope: EventEnvelopeOf<E> = {
    id: fields.id ?? randomUUID(),
    type,
    occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
    merchantId: fields.merchantId,
    paymentMethod: fields.paymentMethod ?? null,
    referenceIds: fields.referenceIds ?? referenceIdsOf(type, fields.data),
    data: fields.data,
  };
  return envelope as EventEnvelope<E>;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A field's test and what it expects; `shape`, for a closed set a newer build may extend: a value of
 * that shape outside the set is an unknown value, not a malformed one.
 */
type Check = [test: (value: unknown) => boolean, expected: string, shape?: RegExp];

/**
 * The shapes of the closed sets' values: a set's words as its own are written (all lowercase, or
 * each capitalised), return codes, currency codes. A value of another case (`Paid` for `paid`) or a
 * leaked `undefined` is a producer's bug, dead-lettered at once, not a newer build's value.
 */
function shapeOf(values: readonly string[]): RegExp {
  if (values.every((value) => /^[a-z]+$/.test(value))) return /^[a-z][a-z0-9]{0,39}$/;
  if (values.every((value) => /^[A-Z][A-Za-z]*$/.test(value))) return /^[A-Z][A-Za-z0-9]{0,39}$/;
  return /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;
}
const NOT_VALUES = new Set(['undefined', 'null', 'nan', 'none', 'Undefined', 'Null', 'NaN', 'None']);
const RETURN_CODE_SHAPE = /^BYRD\d{3}$/;
const CURRENCY_SHAPE = /^[A-Z]{3}$/;

const string: Check = [(v) => typeof v === 'string' && v.length > 0, 'a non-empty string'];
const nullableString: Check = [(v) => v === null || typeof v === 'string', 'a string or null'];
const amount: Check = [(v) => typeof v === 'string' && DECIMAL_AMOUNT_PATTERN.test(v), 'a decimal string'];
const currency: Check = [isKnownCurrency, 'an ISO 4217 currency code', CURRENCY_SHAPE];
const oneOf = (values: readonly string[]): Check => [
  (v) => isOneOf(values, v),
  `one of ${values.join(', ')}`,
  shapeOf(values),
];
const optional = ([test, expected, shape]: Check): Check => [
  (v) => v === undefined || test(v),
  `${expected} (or absent)`,
  shape,
];

// Field checks of each family's content; extra fields are allowed so producers can add some.
const CONTENT_SCHEMAS: Record<EventFamily, Record<string, Check>> = {
  order: {
    orderId: string,
    orderRef: nullableString,
    status: oneOf(ORDER_STATUSES),
    paymentId: nullableString,
    transactionId: nullableString,
    amount,
    currency,
  },
  transaction: {
    transactionId: string,
    orderId: nullableString,
    orderRef: nullableString,
    status: oneOf(TRANSACTION_STATUSES),
    operationType: oneOf(OPERATION_TYPES),
    amount,
    currency,
    code: [isReturnCode, 'a return code', RETURN_CODE_SHAPE],
    description: [(v) => typeof v === 'string', 'a string'],
    isoAmount: optional([
      (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_ISO_AMOUNT,
      'an integer',
    ]),
    sourceTransactionId: optional(nullableString),
    paymentMethod: optional(oneOf(PAYMENT_METHODS)),
    initiatedFrom: optional(oneOf(INITIATED_FROM_VALUES)),
  },
  chargeback: {
    chargebackId: string,
    transactionId: string,
    orderId: nullableString,
    status: oneOf(CHARGEBACK_STATUSES),
    amount,
    currency,
    reason: nullableString,
  },
};

/**
 * Validates a received envelope: an object, a JSON string, or the raw bytes of a JetStream
 * message. Returns it typed, so `type` narrows `data`.
 * @throws EnvelopeError naming every malformed field.
 */
export function parseEnvelope(json: unknown): EventEnvelope {
  const value = decode(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EnvelopeError(['the envelope must be a JSON object']);
  }
  const envelope = value as Record<string, unknown>;
  const issues: string[] = [];
  let malformed = false;
  // The issue is described only when there is one: an event read per message is nearly always valid.
  // `unknownValue`: the failed value has the shape of its closed set's values (see EnvelopeError).
  const expect = (ok: boolean, issue: () => string, unknownValue = false): void => {
    if (ok) return;
    issues.push(issue());
    if (!unknownValue) malformed = true;
  };

  expect(isGuid(envelope.id), () => `id must be a lowercase GUID, got ${show(envelope.id)}`);
  expect(
    isEventName(envelope.type),
    () => `type must be an event name of the catalogue, got ${show(envelope.type)}`,
  );
  expect(
    typeof envelope.occurredAt === 'string' &&
      ISO_TIMESTAMP.test(envelope.occurredAt) &&
      !Number.isNaN(Date.parse(envelope.occurredAt)),
    () => `occurredAt must be an ISO 8601 timestamp, got ${show(envelope.occurredAt)}`,
  );
  expect(
    typeof envelope.merchantId === 'string' && envelope.merchantId.length > 0,
    () => `merchantId must be a non-empty string, got ${show(envelope.merchantId)}`,
  );
  expect(
    envelope.paymentMethod === null || isOneOf(PAYMENT_METHODS, envelope.paymentMethod),
    () => `paymentMethod must be a payment method or null, got ${show(envelope.paymentMethod)}`,
    hasShape(envelope.paymentMethod, shapeOf(PAYMENT_METHODS)),
  );
  expect(
    Array.isArray(envelope.referenceIds) &&
      envelope.referenceIds.every((id) => typeof id === 'string' && id.length > 0),
    () => `referenceIds must be an array of non-empty strings, got ${show(envelope.referenceIds)}`,
  );

  const data = envelope.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    expect(false, () => `data must be an object, got ${show(data)}`);
  } else if (isEventName(envelope.type)) {
    const content = data as Record<string, unknown>;
    for (const [field, [test, expected, shape]] of Object.entries(
      CONTENT_SCHEMAS[eventFamily(envelope.type)],
    )) {
      expect(
        test(content[field]),
        () => `data.${field} must be ${expected}, got ${show(content[field])}`,
        hasShape(content[field], shape),
      );
    }
  }

  if (issues.length) throw new EnvelopeError(issues, !malformed);
  return envelope as unknown as EventEnvelope;
}

function hasShape(value: unknown, shape: RegExp | undefined): boolean {
  return shape !== undefined && typeof value === 'string' && shape.test(value) && !NOT_VALUES.has(value);
}

function decode(json: unknown): unknown {
  if (typeof json !== 'string' && !(json instanceof Uint8Array)) return json;
  const text = typeof json === 'string' ? json : new TextDecoder().decode(json);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EnvelopeError(['the envelope is not valid JSON']);
  }
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') {
    return `a ${typeof value}`;
  }
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return 'an unserialisable value';
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
