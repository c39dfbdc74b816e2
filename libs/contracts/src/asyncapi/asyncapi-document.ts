// The AsyncAPI 3 document of the platform's NATS traffic (docs/asyncapi.yaml), built from the event
// catalogue, the RPC subjects and the schemas generated from their types, so it cannot drift from them.
import {
  ALL_EVENT_NAMES,
  EVENT_FAMILIES,
  EVENT_STREAM_SUBJECTS,
  EVENTS_STREAM,
  eventFamily,
  type EventFamily,
  type EventName,
} from '../events/catalogue.js';
import {
  RPC_CALLER_HEADER,
  RPC_CALLERS,
  RPC_REQUEST_ID_HEADER,
  RPC_SEALED_REQUESTS,
  RpcSubjects,
  type RpcSubject,
} from '../rpc.js';
import { exampleEnvelope } from './examples.js';
import { CONTENT_SCHEMA_NAMES, generatePayloadSchemas, type Schema } from './payload-schemas.js';

export type Service = 'orders' | 'payments' | 'gateway-tokens' | 'webhook-service' | 'hosted-form-bff';

const SERVICES: Record<Service, string> = {
  orders: 'Orders, checkout keys and the order state machine; moves orders on transaction events.',
  payments: 'Payments, 3-D Secure, capture/refund/release and chargebacks; owns every transaction.',
  'gateway-tokens': 'The card vault: tokens and card encryption.',
  'webhook-service': 'Delivers every event to the merchants that subscribed to it, with retries.',
  'hosted-form-bff': 'Backend of the hosted payment form.',
};

/** Who publishes each family (DESIGN.md, "Ownership"): payments owns transactions and chargebacks. */
export const EVENT_PUBLISHERS: Record<EventFamily, Service> = {
  order: 'orders',
  transaction: 'payments',
  chargeback: 'payments',
};

/**
 * The durable pull consumers of the EVENTS stream (their names are the services' `durable`s): each
 * receives its whole family, or only `subject` when given.
 */
export const EVENT_CONSUMERS: readonly {
  service: Service;
  durable: string;
  family: EventFamily;
  subject?: EventName;
}[] = [
  { service: 'orders', durable: 'orders-transactions', family: 'transaction' },
  { service: 'payments', durable: 'payments-order-canceled', family: 'order', subject: 'order.canceled' },
  { service: 'webhook-service', durable: 'webhooks-orders', family: 'order' },
  { service: 'webhook-service', durable: 'webhooks-transactions', family: 'transaction' },
  { service: 'webhook-service', durable: 'webhooks-chargebacks', family: 'chargeback' },
];

/** The consumers that receive events of this type. */
export function consumersOf(type: EventName): (typeof EVENT_CONSUMERS)[number][] {
  return EVENT_CONSUMERS.filter(
    (c) => c.family === eventFamily(type) && (c.subject === undefined || c.subject === type),
  );
}

/** The service behind the middle segment of `rpc.<service>.<verb>`; it serves in a queue group of its name. */
const RPC_SERVERS: Record<string, Service> = {
  orders: 'orders',
  payments: 'payments',
  tokens: 'gateway-tokens',
};

/** NATS headers a caller names an unsigned request with, for the reply signed in clear it expects. */
const REQUEST_NAMING_HEADERS: Schema = {
  type: 'object',
  properties: {
    [RPC_REQUEST_ID_HEADER]: {
      type: 'string',
      description: 'A fresh id for this request (each try its own).',
    },
    [RPC_CALLER_HEADER]: {
      type: 'string',
      description: "The caller's service name (the signed reply's aud).",
    },
  },
};

/** Callers of the subjects RPC_CALLERS leaves open (it lists the authenticated ones and their callers). */
const OPEN_RPC_CALLERS: Partial<Record<RpcSubject, readonly Service[]>> = {
  'rpc.orders.get': ['hosted-form-bff', 'payments'],
  'rpc.orders.cancel': ['hosted-form-bff'],
  'rpc.orders.embedding': ['hosted-form-bff'],
  'rpc.payments.get': ['hosted-form-bff'],
};

const NATS_BINDING_VERSION = '0.1.0';

type Document = Record<string, unknown>;
type Ref = { $ref: string };

const ref = (...path: string[]): Ref => ({ $ref: `#/${path.join('/')}` });

/** Builds the whole document (runs the schema generator, so it takes a few seconds). */
export function buildAsyncApiDocument(version: string): Document {
  const payloads = generatePayloadSchemas();
  const channels: Document = {};
  const operations: Document = {};
  const messages: Document = {};

  for (const type of ALL_EVENT_NAMES) {
    const family = eventFamily(type);
    const example = exampleEnvelope(type);
    messages[type] = {
      name: type,
      title: type,
      summary: `The ${type} event: an envelope whose data is ${CONTENT_SCHEMA_NAMES[family]}.`,
      contentType: 'application/json',
      headers: ref('components', 'schemas', 'EventHeaders'),
      payload: payloads.events[type],
      examples: [{ name: type, headers: { 'Nats-Msg-Id': example.id }, payload: example }],
    };
    channels[type] = {
      address: type,
      title: type,
      description: `Subject of the \`${type}\` event, stored in the \`${EVENTS_STREAM}\` stream.`,
      messages: { [type]: ref('components', 'messages', type) },
    };
    const publisher = EVENT_PUBLISHERS[family];
    operations[`${publisher}.publishes.${type}`] = {
      action: 'send',
      channel: ref('channels', type),
      title: `${publisher} publishes ${type}`,
      description:
        'Written to the outbox in the transaction that made the change; the relay publishes it to ' +
        'JetStream with the envelope id as msgID.',
      tags: [ref('components', 'tags', publisher)],
      messages: [ref('channels', type, 'messages', type)],
    };
    for (const consumer of consumersOf(type)) {
      operations[`${consumer.service}.receives.${type}`] = {
        action: 'receive',
        channel: ref('channels', type),
        title: `${consumer.service} receives ${type}`,
        description: `Durable pull consumer \`${consumer.durable}\` (filter \`${consumer.subject ?? `${family}.>`}\`).`,
        tags: [ref('components', 'tags', consumer.service)],
        messages: [ref('channels', type, 'messages', type)],
      };
    }
  }

  for (const subject of Object.values(RpcSubjects)) {
    const server = rpcServerOf(subject);
    const signed = RPC_CALLERS[subject] !== undefined;
    const callers = (RPC_CALLERS[subject] ?? OPEN_RPC_CALLERS[subject]) as readonly Service[] | undefined;
    if (!callers?.length) throw new Error(`name the callers of ${subject} in OPEN_RPC_CALLERS`);
    const { request, reply } = payloads.rpc[subject];
    const requestName = `${subject}.request`;
    const replyName = `${subject}.reply`;
    messages[requestName] = {
      name: requestName,
      title: `${subject} request`,
      contentType: 'application/json',
      ...(signed ? {} : { headers: REQUEST_NAMING_HEADERS }),
      payload: !signed
        ? request
        : RPC_SEALED_REQUESTS[subject]
          ? sealedRequest(subject, request)
          : signedRequest(subject, request),
    };
    messages[replyName] = {
      name: replyName,
      title: `${subject} reply`,
      contentType: 'application/json',
      payload: signed ? sealedReply(reply) : replySignedInClear(reply),
    };
    channels[subject] = {
      address: subject,
      title: subject,
      description:
        `Request/reply subject served by ${server}` +
        (!signed
          ? '.'
          : `; only ${callers.join(', ')} may call it (signed requests` +
            (RPC_SEALED_REQUESTS[subject] ? `, sealed to ${server}` : '') +
            ', encrypted replies).'),
      messages: { request: ref('components', 'messages', requestName) },
    };
    channels[replyName] = {
      address: null,
      title: `${subject} reply`,
      description: `The caller's inbox subject (NATS request/reply) that receives the answer to ${subject}.`,
      messages: { reply: ref('components', 'messages', replyName) },
    };
    const operationReply = {
      channel: ref('channels', replyName),
      messages: [ref('channels', replyName, 'messages', 'reply')],
    };
    operations[`${server}.serves.${subject}`] = {
      action: 'receive',
      channel: ref('channels', subject),
      title: `${server} serves ${subject}`,
      tags: [ref('components', 'tags', server)],
      bindings: { nats: { queue: server, bindingVersion: NATS_BINDING_VERSION } },
      messages: [ref('channels', subject, 'messages', 'request')],
      reply: operationReply,
    };
    for (const caller of callers) {
      operations[`${caller}.calls.${subject}`] = {
        action: 'send',
        channel: ref('channels', subject),
        title: `${caller} calls ${subject}`,
        tags: [ref('components', 'tags', caller)],
        messages: [ref('channels', subject, 'messages', 'request')],
        reply: operationReply,
      };
    }
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Byrd platform: NATS events and internal requests',
      version,
      description: describeDocument(),
    },
    defaultContentType: 'application/json',
    servers: {
      local: {
        host: '127.0.0.1:4222',
        protocol: 'nats',
        description:
          'The local stack (`npm start`). Elsewhere the services connect to `NATS_URL`; with ' +
          '`NATS_SUBJECT_PREFIX` set, every subject below carries that prefix.',
      },
    },
    channels,
    operations,
    components: {
      schemas: {
        ...payloads.components,
        EventHeaders: {
          type: 'object',
          required: ['Nats-Msg-Id'],
          properties: {
            'Nats-Msg-Id': {
              type: 'string',
              description:
                'The envelope id, set by the publisher as the JetStream msgID: the server drops a re-publish ' +
                'of the same event within the stream’s duplicate window.',
            },
            traceparent: {
              type: 'string',
              pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
              description:
                'W3C Trace Context of the work that wrote the event (stored beside its outbox row): a ' +
                'consumer’s span for the event is its child, so one trace follows a request across services. ' +
                'Absent for events written outside any traced work.',
            },
          },
        },
      },
      messages,
      tags: Object.fromEntries(
        (Object.keys(SERVICES) as Service[]).map((service) => [
          service,
          { name: service, description: SERVICES[service] },
        ]),
      ),
    },
  };
}

function rpcServerOf(subject: RpcSubject): Service {
  const server = RPC_SERVERS[subject.split('.')[1]];
  if (!server) throw new Error(`no service serves ${subject}: add its segment to RPC_SERVERS`);
  return server;
}

/** What an authenticated subject carries: the request inside a compact JWS. */
function signedRequest(subject: string, request: Schema): Schema {
  return {
    type: 'object',
    required: ['jws'],
    properties: {
      jws: {
        type: 'string',
        description:
          `Compact JWS (EdDSA) signed by the caller: issuer its service name, audience \`${subject}\`, ` +
          'a 30 s lifetime and a unique jti (a replay is refused). Its claims are in x-jws-claims.',
      },
    },
    'x-jws-claims': {
      type: 'object',
      required: ['req', 'rk'],
      properties: {
        req: request,
        rk: {
          type: 'object',
          description: "The caller's X25519 public key (JWK) the reply is encrypted to.",
        },
      },
    },
  };
}

/** What a subject carrying a card takes: the signed request, encrypted to the serving service. */
function sealedRequest(subject: string, request: Schema): Schema {
  return {
    type: 'object',
    required: ['sealed'],
    properties: {
      sealed: {
        type: 'object',
        description:
          'General JWE (JSON serialization, A256GCM) whose plaintext is the compact JWS in x-sealed-plaintext: ' +
          "a recipient (ECDH-ES+A256KW) per key RPC_TRUSTED_CALLERS lists for the serving service, each that Ed25519 key's " +
          'X25519 twin, so no reader of the subject but that service gets the card.',
      },
    },
    'x-sealed-plaintext': signedRequest(subject, request),
  };
}

/** What an authenticated subject answers: the reply encrypted to the caller, or a refusal in clear. */
function sealedReply(reply: Schema): Schema {
  const sealed: Schema = {
    type: 'object',
    required: ['jwe'],
    properties: {
      jwe: {
        type: 'string',
        description:
          "Compact JWE (ECDH-ES, A256GCM) to the request's reply key; its plaintext is in x-jwe-plaintext, " +
          'with beside it `jws`: the same reply signed by the serving service (x-jws-payload). The caller ' +
          'believes only the signed one.',
      },
    },
    'x-jwe-plaintext': reply,
    'x-jws-payload': {
      type: 'object',
      description:
        'EdDSA JWS by the serving service: iss its name, aud the caller, sub the subject, `rid` the ' +
        "request's jti, `rep` the reply.",
      required: ['iss', 'aud', 'sub', 'iat', 'rid', 'rep'],
      properties: {
        iss: { type: 'string' },
        aud: { type: 'string' },
        sub: { type: 'string' },
        iat: { type: 'integer' },
        rid: { type: 'string' },
        rep: reply,
      },
    },
  };
  return {
    oneOf: [sealed, signedRefusal(refusal(reply))],
  };
}

/** A refusal in clear of a request the server could not verify, signed for that request when it can be read. */
function signedRefusal(branch: Schema): Schema {
  return {
    ...branch,
    description:
      'A refused caller (bad signature, not allowed, replay) gets the error in clear, with beside it ' +
      "`jws` when the server could read the request's iss and jti (never for a replay): EdDSA JWS by the " +
      'serving service, iss its name, aud the caller, sub the subject, `rid` the jti, `rh` the SHA-256 ' +
      "(base64url) of the request's exact bytes, `rep` the refusal. The caller takes a refusal without it " +
      'only when nothing signed came by its timeout.',
    properties: { ...branch.properties, jws: { type: 'string' } },
  };
}

/** The reply of a subject whose requests are not signed: in clear, signed beside it for the request. */
function replySignedInClear(reply: Schema): Schema {
  return {
    allOf: [reply],
    type: 'object',
    properties: { jws: { type: 'string' } },
    description:
      'When the request named itself (headers), `jws` beside the reply: EdDSA JWS by the serving ' +
      'service, iss its name, aud the caller, sub the subject, `rid` the Byrd-Rpc-Request-Id, `rh` the ' +
      "SHA-256 (base64url) of the request's exact bytes, `rep` the reply. The caller believes only `rep`, " +
      'and skips any reply without it (another client of the broker may answer first).',
  };
}

/** The error branch of a reply (`{ ok: false, error }`). */
function refusal(reply: Schema): Schema {
  const branch = reply.anyOf?.find(
    (option) =>
      (option as Schema).properties?.ok && ((option as Schema).properties!.ok as Schema).const === false,
  );
  if (!branch) throw new Error('an RPC reply has no error branch');
  return branch as Schema;
}

function describeDocument(): string {
  const families = EVENT_FAMILIES.map((family) => `\`${family}.*\` (${EVENT_PUBLISHERS[family]})`).join(', ');
  return [
    'Generated from libs/contracts (the event catalogue, the envelope and content types, the RPC subjects ' +
      'and their request/reply types) by `npm run asyncapi -w @byrd/contracts`. Do not edit it by hand: ' +
      "the contracts' tests fail when it differs from what the generator writes.",
    `**Events.** Every event is published to the JetStream stream \`${EVENTS_STREAM}\` (subjects ` +
      `${EVENT_STREAM_SUBJECTS.map((s) => `\`${s}\``).join(', ')}) on the subject named by its type: ${families}. ` +
      'The payload is the envelope `{ id, type, occurredAt, merchantId, paymentMethod, referenceIds, data }`; ' +
      'its `id` is also the JetStream msgID (header `Nats-Msg-Id`), so a re-publish is de-duplicated. ' +
      'Producers publish through a transactional outbox, so an event follows its change at least once. ' +
      'Consumers are durable pull consumers that ack after their own commit and record the event id, so a ' +
      'redelivery is a no-op; they ignore fields they do not know.',
    '**Requests.** Services ask each other on `rpc.<service>.<verb>` subjects with NATS request/reply ' +
      '(never a stream subject); a service serves them in a queue group named after itself. Every reply is ' +
      '`{ ok: true, data }` or `{ ok: false, error: { code, message, errors? } }`. Subjects that carry card ' +
      'data or decide over money take signed requests from the services allowed to call them and answer ' +
      'signed by the serving service for that request and encrypted to the caller. These subjects are ' +
      'internal: no merchant sees them.',
  ].join('\n\n');
}
