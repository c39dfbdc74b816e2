// The ledger of a chaos run, checked after the load stopped and the platform drained: what the
// merchant saw, what the databases hold, what reached the stream and what reached the receiver.
// Each check answers { check, ok, figure, detail }.
import { DeliverPolicy } from '@nats-io/jetstream';

const CHARGES = `operation_type IN ('Payment', 'PreAuth') AND status = 'Success'`;
const DELIVERED_FAMILIES = /^(order|transaction|chargeback)\./;

export async function checkLedger({ postgres, dbs, nats, streamName, receiver, flows, merchantId }) {
  const q = (service, sql, params) => postgres.query(sql, params, dbs[service]);
  const checks = [];
  const add = (check, ok, figure, detail = '') => checks.push({ check, ok, figure, detail });
  /** A check that passes when nothing was `found`: its count (of `total`) and the first few, named. */
  const none = (check, found, name, total) =>
    add(
      check,
      found.length === 0,
      total === undefined ? found.length : `${found.length} of ${total}`,
      found.slice(0, 5).map(name).join(', '),
    );

  // 1. Every charge the client saw succeed exists once, as a success.
  const seen = flows.flatMap((flow) => flow.succeeded ?? []);
  const found = await q(
    'payments',
    `SELECT id FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'Success'`,
    [seen],
  );
  const succeeded = new Set(found.map((row) => row.id));
  const missing = seen.filter((id) => !succeeded.has(id));
  add(
    'transactions the client saw succeed exist as Success',
    missing.length === 0,
    `${seen.length - missing.length}/${seen.length}`,
    missing.slice(0, 5).join(' '),
  );

  // 2. No order charged twice; no idempotency key charged twice.
  const doubleOrders = await q(
    'payments',
    `SELECT order_id, count(*)::int AS n FROM transactions WHERE ${CHARGES} AND order_id IS NOT NULL GROUP BY order_id HAVING count(*) > 1`,
  );
  none('orders with two successful charges', doubleOrders, (r) => r.order_id);
  const doubleKeys = await q(
    'payments',
    `SELECT idempotency_key, count(*)::int AS n FROM transactions WHERE ${CHARGES} AND idempotency_key IS NOT NULL GROUP BY merchant_id, idempotency_key HAVING count(*) > 1`,
  );
  none('idempotency keys charged twice', doubleKeys, (r) => r.idempotency_key);

  // The acquirer's own ledger (the sandbox's) against payments': money held that no Success shows, or
  // a Success the acquirer does not hold.
  const disagreeing = await q(
    'payments',
    `SELECT t.id, t.status, l.outcome, l.voided_at IS NOT NULL AS voided
       FROM transactions t FULL JOIN sandbox_acquirer_ledger l ON l.reference = t.id
      WHERE coalesce(t.operation_type, l.operation) IN ('Payment', 'PreAuth')
        AND coalesce(l.outcome = 'Success' AND l.voided_at IS NULL, false)
            <> coalesce(t.status = 'Success', false)`,
  );
  none(
    'charges the acquirer and payments disagree on',
    disagreeing,
    (r) => `${r.id}:${r.status}/${r.outcome}${r.voided ? ' voided' : ''}`,
  );

  // 3. Every order's status agrees with its transactions.
  const charged = new Set(
    (await q('payments', `SELECT order_id FROM transactions WHERE ${CHARGES} AND order_id IS NOT NULL`)).map(
      (r) => r.order_id,
    ),
  );
  const inFlight = new Set(
    (
      await q(
        'payments',
        `SELECT order_id FROM transactions WHERE status IN ('Processing', 'Created') AND order_id IS NOT NULL`,
      )
    ).map((r) => r.order_id),
  );
  const orders = await q('orders', `SELECT id, status FROM orders`);
  const disagree = orders.filter((order) => {
    const paid = ['paid', 'refunded'].includes(order.status);
    if (charged.has(order.id)) return !paid;
    if (paid) return true;
    return order.status === 'pending' && !inFlight.has(order.id);
  });
  none(
    'orders whose status disagrees with their transactions',
    disagree,
    (o) => `${o.id}:${o.status}`,
    orders.length,
  );

  // 4. Nothing left unsettled: payments in Processing, orders held.
  const processing = await q(
    'payments',
    `SELECT count(*)::int AS n FROM transactions WHERE status = 'Processing'`,
  );
  add('transactions still Processing', processing[0].n === 0, processing[0].n);
  // An order held by an attempt that ended holding no money (or that payments never wrote) can never
  // be paid, canceled or expired again.
  const locks = await q('orders', `SELECT id, payment_lock_id FROM orders WHERE payment_lock_id IS NOT NULL`);
  const holders = new Map(
    (
      await q('payments', `SELECT id, status FROM transactions WHERE id = ANY($1::uuid[])`, [
        locks.map((lock) => lock.payment_lock_id),
      ])
    ).map((row) => [row.id, row.status]),
  );
  none(
    'orders held by an attempt that ended without money',
    locks.filter((lock) =>
      ['Denied', 'Error', 'Canceled', undefined].includes(holders.get(lock.payment_lock_id)),
    ),
    (lock) => `${lock.id}:${holders.get(lock.payment_lock_id) ?? 'unknown'}`,
    locks.length,
  );

  // 5. Every committed state change reached the stream: outboxes empty (a published row is deleted),
  // and every order and every settled transaction named by an event.
  const streamIds = new Set();
  const referenced = new Set();
  const streamEvents = [];
  for await (const envelope of readStream(nats, streamName)) {
    streamIds.add(envelope.id);
    for (const id of envelope.referenceIds ?? []) referenced.add(id);
    if (envelope.merchantId === merchantId && DELIVERED_FAMILIES.test(envelope.type))
      streamEvents.push(envelope);
  }
  let unpublished = 0;
  for (const service of Object.keys(dbs))
    unpublished += (await q(service, `SELECT count(*)::int AS n FROM outbox`))[0].n;
  add('outbox rows not published', unpublished === 0, unpublished);
  const changes = [
    ...(await q('orders', `SELECT 'order ' || id AS name, id::text FROM orders`)),
    ...(await q(
      'payments',
      `SELECT operation_type || ' ' || status || ' ' || id AS name, id::text FROM transactions WHERE status IN ('Success', 'Denied', 'Error', 'Canceled')`,
    )),
  ];
  const unannounced = changes.filter((change) => !referenced.has(change.id));
  none('orders and settled transactions no event names', unannounced, (c) => c.name, changes.length);

  // 6. Every event of the merchant became a webhook, and every webhook reached the receiver.
  const webhooks = await q(
    'webhook-service',
    `SELECT id, event_id, event, status, next_attempt_at FROM webhooks`,
  );
  const byEvent = new Set(webhooks.map((row) => row.event_id));
  const noWebhook = streamEvents.filter((envelope) => !byEvent.has(envelope.id));
  none('events with no webhook', noWebhook, (e) => `${e.type}:${e.id}`, streamEvents.length);
  const undelivered = webhooks.filter((row) => !receiver.accepted.has(row.id));
  none(
    'webhooks that never reached the receiver',
    undelivered,
    (w) => `${w.event}:${w.status}`,
    webhooks.length,
  );
  const duplicates = [...receiver.accepted.values()].reduce((sum, seenOne) => sum + seenOne.count - 1, 0);
  add('duplicate deliveries (same webhook-id, at-least-once)', true, duplicates);
  const stuck = webhooks.filter(
    (row) =>
      row.status === 'pending' && row.next_attempt_at && row.next_attempt_at.getTime() < Date.now() - 30_000,
  );
  none('webhooks pending past their schedule', stuck, (w) => w.id);
  const failed = webhooks.filter((row) => row.status === 'failed');
  none('webhooks failed for good', failed, (w) => w.id);

  return {
    checks,
    figures: {
      events: streamIds.size,
      merchantEvents: streamEvents.length,
      webhooks: webhooks.length,
      succeeded: seen.length,
    },
  };
}

/** Every envelope on the stream, in order (an ordered consumer, read until its last sequence). */
async function* readStream(nats, streamName) {
  const info = await nats.jsm.streams.info(streamName);
  const last = info.state.last_seq;
  if (info.state.messages === 0) return;
  const consumer = await nats.js.consumers.get(streamName, { deliver_policy: DeliverPolicy.All });
  let seq = 0;
  while (seq < last) {
    const batch = await consumer.fetch({ max_messages: 500, expires: 2_000 });
    let got = 0;
    for await (const message of batch) {
      got++;
      seq = message.seq;
      yield message.json();
      if (seq >= last) break;
    }
    if (got === 0) break;
  }
}

/**
 * Proves the ledger can fail: loses one webhook and un-pays one paid order in the databases, checks
 * again, and answers the names of the sabotaged checks that did NOT notice (empty when all did).
 * Run last: it corrupts the run's world.
 */
export async function checksMissingSabotage(input) {
  const { postgres, dbs } = input;
  await postgres.query(
    `DELETE FROM webhooks WHERE id = (SELECT id FROM webhooks LIMIT 1)`,
    [],
    dbs['webhook-service'],
  );
  await postgres.query(
    `UPDATE orders SET status = 'created' WHERE id = (SELECT id FROM orders WHERE status = 'paid' LIMIT 1)`,
    [],
    dbs.orders,
  );
  const { checks } = await checkLedger(input);
  const failed = new Set(checks.filter((check) => !check.ok).map((check) => check.check));
  return ['events with no webhook', 'orders whose status disagrees with their transactions'].filter(
    (name) => !failed.has(name),
  );
}
