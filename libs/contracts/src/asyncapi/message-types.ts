// The types the AsyncAPI document's payload schemas are generated from (by ts-json-schema-generator,
// reading this file's source): each is a mapped type over the catalogue, so a new event name or RPC
// subject gets its schema without anyone listing it here.
import type { EventName } from '../events/catalogue.js';
import type { EventEnvelopeOf } from '../events/envelope.js';
import type { RpcContracts, RpcReply } from '../rpc.js';

/** The envelope of each event name, its `data` typed by the event's family. */
export type EventEnvelopes = { [E in EventName]: EventEnvelopeOf<E> };

/** The request and the reply of each request/reply subject, as they are before any signing or sealing. */
export type RpcMessages = {
  [S in keyof RpcContracts]: {
    request: RpcContracts[S]['request'];
    reply: RpcReply<RpcContracts[S]['response']>;
  };
};
