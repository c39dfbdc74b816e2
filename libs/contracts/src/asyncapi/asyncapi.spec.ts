import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import asyncApiSpecs from '@asyncapi/specs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { describe as describeCode } from '../codes.js';
import { ALL_EVENT_NAMES, EVENT_FAMILIES, eventFamily, type EventName } from '../events/catalogue.js';
import { createEnvelope, parseEnvelope } from '../events/envelope.js';
import { toDecimalAmount } from '../money.js';
import { RpcSubjects } from '../rpc.js';
import { consumersOf, EVENT_CONSUMERS, EVENT_PUBLISHERS } from './asyncapi-document.js';
import { CONTENT_SCHEMA_NAMES } from './payload-schemas.js';
import { ASYNCAPI_PATH, renderAsyncApi } from './render.js';

type Json = Record<string, any>;

const committed = readFileSync(ASYNCAPI_PATH, 'utf8');
const doc = parse(committed) as Json;

function newAjv(options: { ownMetaSchema?: boolean } = {}): Ajv {
  // strict off: AsyncAPI documents carry keywords (examples, x-*) a bare JSON Schema validator does not know.
  // The AsyncAPI schema bundles its own copy of the draft-07 meta-schema, so Ajv must not add one.
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    meta: !options.ownMetaSchema,
    validateSchema: !options.ownMetaSchema,
  });
  addFormats.default(ajv);
  return ajv;
}

/** Validators of the committed document's message payloads, references resolved inside the document. */
const payloads = (() => {
  const ajv = newAjv();
  ajv.addSchema(doc, 'asyncapi');
  const cache = new Map<string, ValidateFunction>();
  return (message: string): ValidateFunction => {
    if (!cache.has(message)) {
      const validate = ajv.getSchema(`asyncapi#/components/messages/${message}/payload`);
      if (!validate) throw new Error(`no payload schema for ${message}`);
      cache.set(message, validate);
    }
    return cache.get(message)!;
  };
})();

const accepts = (message: string, payload: unknown): boolean => payloads(message)(payload) === true;

describe('docs/asyncapi.yaml', () => {
  it('is what the generator writes from the contracts now (run `npm run asyncapi -w @byrd/contracts` after a change)', async () => {
    expect(committed).toBe(await renderAsyncApi());
  });

  it('is a valid AsyncAPI 3.0 document whose references all resolve', () => {
    const validate = newAjv({ ownMetaSchema: true }).compile(asyncApiSpecs.schemas['3.0.0']);
    validate(doc);
    expect(validate.errors ?? []).toEqual([]);

    const unresolved: string[] = [];
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && resolve(value) === undefined)
          unresolved.push(value);
        else visit(value);
      }
    };
    visit(doc);
    expect(unresolved).toEqual([]);
  });

  it('has a channel on each event subject, published by its owner and received by every consumer of its family', () => {
    for (const type of ALL_EVENT_NAMES) {
      const channel = doc.channels[type];
      expect({ type, address: channel?.address }).toEqual({ type, address: type });
      const payload = resolve(channel.messages[type].$ref)?.payload;
      expect(payload.allOf[1].properties.data.$ref).toBe(
        `#/components/schemas/${CONTENT_SCHEMA_NAMES[eventFamily(type)]}`,
      );

      const family = eventFamily(type);
      const operations = operationsOn(type);
      expect(operations.filter((o) => o.action === 'send').map(serviceOf)).toEqual([
        EVENT_PUBLISHERS[family],
      ]);
      expect(operations.filter((o) => o.action === 'receive').map(serviceOf)).toEqual(
        consumersOf(type).map((c) => c.service),
      );
    }
    // The webhook service receives every family: merchants can subscribe to any event.
    for (const family of EVENT_FAMILIES) {
      expect(EVENT_CONSUMERS.some((c) => c.service === 'webhook-service' && c.family === family)).toBe(true);
    }
  });

  it('has a request channel, a reply and a serving service for each RPC subject', () => {
    for (const subject of Object.values(RpcSubjects)) {
      expect(doc.channels[subject]?.address).toBe(subject);
      const served = operationsOn(subject).filter((o) => o.action === 'receive');
      expect(served).toHaveLength(1);
      expect(resolve(served[0].reply.channel.$ref)?.messages.reply).toBeDefined();
    }
    // A card-data subject takes a signed request, never the bare card.
    expect(accepts('rpc.tokens.detokenize.request', { merchantId: 'm', tokenId: randomUUID() })).toBe(false);
    expect(accepts('rpc.tokens.detokenize.request', { jws: 'eyJhbGciOiJFZERTQSJ9.e30.sig' })).toBe(true);
    expect(accepts('rpc.orders.get.request', { orderId: randomUUID(), checkoutKey: 'key' })).toBe(true);
    expect(accepts('rpc.orders.get.request', { orderId: randomUUID() })).toBe(false);
  });

  it('accepts each message example', () => {
    for (const [name, message] of Object.entries(doc.components.messages as Json)) {
      for (const example of message.examples ?? []) {
        expect({ name, valid: accepts(name, example.payload), errors: payloads(name).errors }).toEqual({
          name,
          valid: true,
          errors: null,
        });
      }
    }
  });
});

describe('event payload schemas', () => {
  const merchantId = randomUUID();
  const orderId = randomUUID();
  const transactionId = randomUUID();
  const captureId = randomUUID();

  // Built as the services' event recorders build them (orders: OrderEventRecorder; payments:
  // TransactionEventRecorder, ChargebackEventRecorder).
  const orderPaid = createEnvelope('order.paid', {
    merchantId,
    paymentMethod: 'card',
    referenceIds: [orderId, transactionId],
    data: {
      orderId,
      orderRef: null,
      status: 'paid',
      paymentId: transactionId,
      transactionId,
      amount: toDecimalAmount(1999, 'EUR'),
      currency: 'EUR',
    },
  });
  const captureSuccess = createEnvelope('transaction.capture.success', {
    merchantId,
    paymentMethod: 'card',
    referenceIds: [orderId, captureId, transactionId],
    data: {
      transactionId: captureId,
      orderId,
      orderRef: 'ref-7',
      status: 'Success',
      operationType: 'Capture',
      amount: toDecimalAmount(1000, 'JPY'),
      isoAmount: 1000,
      currency: 'JPY',
      code: 'BYRD200',
      description: describeCode('BYRD200'),
      sourceTransactionId: transactionId,
      paymentMethod: 'card',
      initiatedFrom: 'Server',
    },
  });
  const chargebackWon = createEnvelope('chargeback.won', {
    merchantId,
    paymentMethod: 'card',
    data: {
      chargebackId: randomUUID(),
      transactionId,
      orderId: null,
      status: 'Won',
      amount: toDecimalAmount(500, 'USD'),
      currency: 'USD',
      reason: null,
    },
  });
  const built = [orderPaid, captureSuccess, chargebackWon];

  it('accept envelopes built as the services build them, on their own subject only', () => {
    for (const envelope of built) {
      const wire = JSON.parse(JSON.stringify(envelope)) as unknown;
      expect({
        type: envelope.type,
        errors: (accepts(envelope.type, wire), payloads(envelope.type).errors),
      }).toEqual({
        type: envelope.type,
        errors: null,
      });
      // The same envelope on a sibling subject, or data of another family, is refused.
      const other: EventName = envelope.type === 'order.paid' ? 'order.refunded' : 'order.paid';
      expect(accepts(other, wire)).toBe(false);
    }
    expect(accepts('order.paid', { ...orderPaid, data: captureSuccess.data })).toBe(false);
  });

  // Each mutation breaks (or keeps) what consumers check; the document must decide as parseEnvelope does.
  const mutations: [string, (envelope: Json) => Json][] = [
    ['as built', (e) => e],
    ['an extra envelope field', (e) => ({ ...e, traceId: 'abc' })],
    ['an extra data field', (e) => ({ ...e, data: { ...e.data, extra: 1 } })],
    ['a non-GUID id', (e) => ({ ...e, id: 'event-1' })],
    ['an uppercase GUID id', (e) => ({ ...e, id: randomUUID().toUpperCase() })],
    ['no occurredAt', ({ occurredAt: _o, ...e }) => e],
    ['a date-less occurredAt', (e) => ({ ...e, occurredAt: 'yesterday' })],
    ['an empty merchantId', (e) => ({ ...e, merchantId: '' })],
    ['an unknown payment method', (e) => ({ ...e, paymentMethod: 'cash' })],
    ['a null payment method', (e) => ({ ...e, paymentMethod: null })],
    ['an empty reference id', (e) => ({ ...e, referenceIds: [''] })],
    ['no data', ({ data: _d, ...e }) => e],
    ['a numeric amount', (e) => ({ ...e, data: { ...e.data, amount: 19.99 } })],
    ['a comma amount', (e) => ({ ...e, data: { ...e.data, amount: '19,99' } })],
    ['an unknown currency', (e) => ({ ...e, data: { ...e.data, currency: 'XYZ' } })],
    [
      'a lowercase status',
      (e) => ({ ...e, data: { ...e.data, status: String(e.data.status).toLowerCase() } }),
    ],
    ['a null orderId', (e) => ({ ...e, data: { ...e.data, orderId: null } })],
    ['an empty transactionId', (e) => ({ ...e, data: { ...e.data, transactionId: '' } })],
    ['an unknown return code', (e) => ({ ...e, data: { ...e.data, code: 'BYRD000' } })],
    ['a fractional isoAmount', (e) => ({ ...e, data: { ...e.data, isoAmount: 10.5 } })],
    ['a numeric reason', (e) => ({ ...e, data: { ...e.data, reason: 7 } })],
  ];

  it.each(mutations)('decide an envelope with %s as parseEnvelope does', (_name, mutate) => {
    for (const envelope of built) {
      const candidate = mutate(JSON.parse(JSON.stringify(envelope)) as Json);
      let parsed = true;
      try {
        parseEnvelope(candidate);
      } catch {
        parsed = false;
      }
      expect({ type: envelope.type, schema: accepts(envelope.type, candidate) }).toEqual({
        type: envelope.type,
        schema: parsed,
      });
    }
  });
});

function resolve(ref: string): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json | undefined>((node, part) => (node === undefined ? undefined : node[part]), doc);
}

function operationsOn(channel: string): Json[] {
  return Object.values(doc.operations as Json).filter(
    (o: Json) => o.channel.$ref === `#/channels/${channel}`,
  );
}

function serviceOf(operation: Json): string {
  return operation.tags[0].$ref.split('/').pop();
}
