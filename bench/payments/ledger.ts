// The payments benchmark's ledger: transaction rows = 2xx answers (plus at most the requests in flight
// when a window closed), one 3DS session and one stream message per transaction, no outbox row left,
// the orders consumer drained; the bare handler's rows likewise (its outbox rows stay unpublished).
import type pg from 'pg';
import type { BenchEnvironment, ConsumerBacklog } from '../core/environment.js';
import { countOf } from '../core/environment.js';
import { countRows } from './drain.js';
import type { Answered } from './windows.js';

export const ORDERS_DURABLE = 'orders-transactions';

const between = (rows: number, answered: number, inFlight: number) =>
  rows >= answered && rows <= answered + inFlight;

export interface PaymentsLedger {
  service: Answered['service'] & {
    rows: Record<string, number>;
    unpublishedOutbox: number;
    streamMessages: number;
    ordersInbox: number | null;
    ordersConsumer: ConsumerBacklog | null;
    ok: boolean;
  };
  bare: Answered['bare'] & { rows: Record<string, number>; ok: boolean };
}

export async function checkLedger(
  env: BenchEnvironment,
  pools: { payments: pg.Pool; bare: pg.Pool; orders: pg.Pool | null },
  answered: Answered,
): Promise<PaymentsLedger> {
  const service = await countRows(pools.payments, ['transactions', 'three_ds_sessions', 'outbox']);
  const bareRows = await countRows(pools.bare, ['transactions', 'outbox']);
  const ordersInbox = pools.orders
    ? await countOf(pools.orders, 'SELECT count(*) AS n FROM inbox WHERE consumer = $1', [ORDERS_DURABLE])
    : null;
  const stream = await env.streamState();
  const consumer = await env.consumerBacklog(ORDERS_DURABLE);
  return {
    service: {
      ...answered.service,
      rows: service,
      unpublishedOutbox: service.outbox,
      streamMessages: stream.messages,
      ordersInbox,
      ordersConsumer: consumer,
      ok:
        between(service.transactions, answered.service.answered2xx, answered.service.inFlight) &&
        service.three_ds_sessions === service.transactions &&
        service.outbox === 0 &&
        stream.messages === service.transactions &&
        // Orders acks every event; it records (inbox) only those of a payment with an order.
        (!pools.orders || (consumer !== null && consumer.pending === 0 && consumer.ackPending === 0)),
    },
    bare: {
      ...answered.bare,
      rows: bareRows,
      ok:
        between(bareRows.transactions, answered.bare.answered2xx, answered.bare.inFlight) &&
        bareRows.outbox === bareRows.transactions,
    },
  };
}
