// JSON Schemas of the event envelopes and RPC messages, generated from the TypeScript types the
// services compile against (message-types.ts), then given readable names for the AsyncAPI document.
import { fileURLToPath } from 'node:url';
import { createGenerator, type Definition } from 'ts-json-schema-generator';
import { ALL_EVENT_NAMES, type EventFamily, type EventName } from '../events/catalogue.js';
import { GUID_PATTERN } from '../ids.js';
import { CURRENCY_CODES, DECIMAL_AMOUNT_PATTERN, MAX_ISO_AMOUNT } from '../money.js';
import { RpcSubjects, type RpcSubject } from '../rpc.js';

/** A JSON Schema as AsyncAPI takes it: specification extensions (`x-...`) allowed. */
export type Schema = Definition & { [extension: `x-${string}`]: unknown };

export interface PayloadSchemas {
  /** The envelope of each event name (`type` a constant, `data` a reference to its family's content). */
  events: Record<EventName, Schema>;
  /** The request and reply of each RPC subject, as the handler sees them (before signing or sealing). */
  rpc: Record<RpcSubject, { request: Schema; reply: Schema }>;
  /** Named schemas the payloads reference as `#/components/schemas/<name>`. */
  components: Record<string, Schema>;
}

/** The content schema (a component) of each event family, as `EventContentOf` maps it (the tests check it does). */
export const CONTENT_SCHEMA_NAMES: Record<EventFamily, string> = {
  order: 'OrderEventContent',
  transaction: 'TransactionEventContent',
  chargeback: 'ChargebackEventContent',
};

const SOURCE = fileURLToPath(new URL('./message-types.ts', import.meta.url));
const TSCONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
const DEFINITIONS = '#/definitions/';
const COMPONENTS = '#/components/schemas/';
/** AsyncAPI's rule for component names. */
const COMPONENT_NAME = /^[\w.-]+$/;

/**
 * What the types cannot say but `parseEnvelope` checks: the same constants (GUID, decimal amount,
 * currency list) narrow the generated schemas, so the document rejects what the consumers reject.
 */
const ENVELOPE_REFINEMENTS: Record<string, Schema> = {
  id: { pattern: GUID_PATTERN.source },
  occurredAt: { format: 'date-time' },
  merchantId: { minLength: 1 },
  referenceIds: { items: { type: 'string', minLength: 1 } },
};
const CONTENT_REFINEMENTS: Record<string, Schema> = {
  amount: { type: 'string', pattern: DECIMAL_AMOUNT_PATTERN.source },
  currency: { $ref: `${COMPONENTS}CurrencyCode` },
  isoAmount: { type: 'integer', minimum: 0, maximum: MAX_ISO_AMOUNT },
};
/** The subject id of each family's content, which consumers require to be non-empty. */
const CONTENT_REQUIRED_IDS: Record<EventFamily, readonly string[]> = {
  order: ['orderId'],
  transaction: ['transactionId'],
  chargeback: ['chargebackId', 'transactionId'],
};

/** Runs the TypeScript-to-JSON-Schema generator over message-types.ts (a few seconds: it parses the contracts with tsc). */
export function generatePayloadSchemas(): PayloadSchemas {
  const generator = createGenerator({
    path: SOURCE,
    tsconfig: TSCONFIG,
    skipTypeCheck: true,
    // Consumers tolerate fields they do not know (producers may add some), so the schemas do too.
    additionalProperties: true,
    expose: 'export',
    topRef: true,
    jsDoc: 'extended',
    sortProps: true,
  });
  const events = generator.createSchema('EventEnvelopes');
  const rpc = generator.createSchema('RpcMessages');
  const definitions = { ...events.definitions, ...rpc.definitions } as Record<string, Schema>;
  const named = new Names(definitions);

  const eventsRoot = definitions.EventEnvelopes;
  const envelopes = ALL_EVENT_NAMES.map((name) =>
    refineEnvelope(named.rewrite(named.resolve(eventsRoot.properties?.[name] as Schema))),
  );
  const { envelope, payloads: eventPayloads } = factorEnvelope(envelopes);

  const rpcPayloads = {} as Record<RpcSubject, { request: Schema; reply: Schema }>;
  const rpcRoot = definitions.RpcMessages;
  for (const subject of Object.values(RpcSubjects)) {
    const pair = rpcRoot.properties?.[subject] as Schema | undefined;
    if (!pair?.properties) throw new Error(`RpcContracts has no entry for ${subject}`);
    rpcPayloads[subject] = {
      request: named.rewrite(pair.properties.request as Schema),
      // A reply is always a tagged union of data or error: inlined, so no generic name leaks.
      reply: named.rewrite(named.resolve(pair.properties.reply as Schema)),
    };
  }

  const components = named.components();
  for (const family of Object.keys(CONTENT_SCHEMA_NAMES) as EventFamily[]) {
    const name = CONTENT_SCHEMA_NAMES[family];
    components[name] = refineContent(components[name], CONTENT_REQUIRED_IDS[family], name);
  }
  components.EventEnvelope = envelope;
  components.CurrencyCode = {
    type: 'string',
    enum: [...CURRENCY_CODES],
    description: 'ISO 4217 currency code the platform knows.',
  };
  return { events: eventPayloads, rpc: rpcPayloads, components: sortKeys(components) };
}

/**
 * The generator's definitions under AsyncAPI component names. An alias of a generic helper
 * (`OrderStatus` = `ValueOf<...>`) takes the helper's content; an instantiation of a generic that only
 * points at a named type (`EventContentOf<"order.paid">` = `OrderEventContent`) becomes that name.
 */
class Names {
  private readonly target = new Map<string, string>();

  constructor(private readonly definitions: Record<string, Schema>) {
    for (const name of Object.keys(definitions)) {
      const schema = definitions[name];
      const alias = schema.$ref?.startsWith(DEFINITIONS) ? decodeName(schema.$ref) : undefined;
      if (!alias) continue;
      if (isGeneric(alias) && !isGeneric(name)) {
        const { $ref: _ref, ...rest } = schema;
        definitions[name] = { ...definitions[alias], ...rest };
        this.target.set(alias, name);
      } else if (isGeneric(name)) {
        this.target.set(name, alias);
      }
    }
  }

  /** The name a definition is published under. */
  nameOf(name: string): string {
    let current = name;
    for (let seen = 0; this.target.has(current) && seen < 10; seen++) current = this.target.get(current)!;
    return current;
  }

  /** The definition a `$ref` points at, for schemas that are inlined rather than named. */
  resolve(schema: Schema): Schema {
    if (!schema.$ref) return schema;
    const definition = this.definitions[decodeName(schema.$ref)];
    if (!definition) throw new Error(`no definition for ${schema.$ref}`);
    return definition;
  }

  /** A copy of a schema whose references point at components. */
  rewrite(schema: Schema): Schema {
    return mapRefs(schema, (ref) => `${COMPONENTS}${this.nameOf(decodeName(ref))}`);
  }

  /** Every definition still referenced from a payload or another component, under its published name. */
  components(): Record<string, Schema> {
    const out: Record<string, Schema> = {};
    for (const name of Object.keys(this.definitions)) {
      const published = this.nameOf(name);
      if (published !== name || name === 'EventEnvelopes' || name === 'RpcMessages') continue;
      if (isGeneric(name)) continue; // inlined where used
      if (!COMPONENT_NAME.test(name)) throw new Error(`${name} is not a valid AsyncAPI component name`);
      out[name] = this.rewrite(this.definitions[name]);
    }
    return out;
  }
}

function isGeneric(name: string): boolean {
  return name.includes('<');
}

function decodeName(ref: string): string {
  return decodeURIComponent(ref.slice(DEFINITIONS.length));
}

function mapRefs(schema: Schema, map: (ref: string) => string): Schema {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) =>
      key === '$ref' && typeof value === 'string' && value.startsWith(DEFINITIONS) ? map(value) : value,
    ),
  ) as Schema;
}

/**
 * Every event's envelope differs from the others only in `type` and `data`: the shared fields become
 * the `EventEnvelope` component and each event's payload names its own `type` and `data` on top of it.
 */
function factorEnvelope(envelopes: readonly Schema[]): {
  envelope: Schema;
  payloads: Record<EventName, Schema>;
} {
  const shared = (schema: Schema): Schema => {
    const { type: _type, data: _data, ...rest } = schema.properties ?? {};
    return { ...schema, properties: rest };
  };
  const [first] = envelopes;
  for (const [index, envelope] of envelopes.entries()) {
    if (JSON.stringify(shared(envelope)) !== JSON.stringify(shared(first))) {
      throw new Error(
        `the envelope of ${ALL_EVENT_NAMES[index]} differs from the others beyond type and data`,
      );
    }
  }
  const { type, data } = first.properties as Record<'type' | 'data', Schema>;
  const envelope: Schema = {
    ...first,
    properties: {
      ...first.properties,
      type: { type: 'string', description: type.description },
      data: { type: 'object', description: data.description },
    },
  };
  const payloads = {} as Record<EventName, Schema>;
  for (const [index, name] of ALL_EVENT_NAMES.entries()) {
    const own = envelopes[index].properties as Record<'type' | 'data', Schema>;
    payloads[name] = {
      allOf: [
        { $ref: `${COMPONENTS}EventEnvelope` },
        { type: 'object', properties: { type: { const: own.type.const }, data: own.data } },
      ],
    };
  }
  return { envelope, payloads };
}

function refineEnvelope(envelope: Schema): Schema {
  const properties = { ...envelope.properties };
  for (const [field, refinement] of Object.entries(ENVELOPE_REFINEMENTS)) {
    properties[field] = { ...(properties[field] as Schema), ...refinement };
  }
  return { ...envelope, properties };
}

function refineContent(content: Schema | undefined, requiredIds: readonly string[], name: string): Schema {
  if (!content?.properties) throw new Error(`${name} is not an object schema`);
  const properties = { ...content.properties };
  for (const [field, refinement] of Object.entries(CONTENT_REFINEMENTS)) {
    const generated = properties[field] as Schema | undefined;
    if (!generated) continue;
    // A refinement replaces the generated type (a number becomes an integer; a string, a currency code).
    properties[field] = refinement.$ref
      ? { ...refinement, description: generated.description }
      : { ...generated, ...refinement };
  }
  for (const field of requiredIds) properties[field] = { ...(properties[field] as Schema), minLength: 1 };
  return { ...content, properties };
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
