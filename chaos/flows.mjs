// What the chaos run's merchant does, each flow a few requests through the edge, as a shop would:
// pay an order by card (approved, declined, or with a 3DS challenge the shopper answers through the
// browser SDK's protocol), pre-authorise → capture → refund, store a card and charge its token.
// A flow answers what it saw: the transactions it saw succeed (for the ledger) and the order it paid.
import { randomUUID } from 'node:crypto';
import { ClientError } from './client.mjs';
import { sleep } from './lib/util.mjs';

const year = (new Date().getUTCFullYear() + 4) % 100;
const EXPIRATION = `12/${String(year).padStart(2, '0')}`;
const card = (number) => ({ number, expiration: EXPIRATION, cvv: '123', holder: 'Chaos Shopper' });
const CARDS = {
  approved: '5448280000000007',
  declined: '4000000000000002',
  challenge: '5555341244441115',
  preAuth: '4242424242424242',
};
const FINAL = new Set(['Success', 'Denied', 'Error', 'Canceled']);

/** The flows and how often each runs (weights). */
export const FLOWS = {
  orderApproved: { weight: 35, run: orderPayment(CARDS.approved, 'Success') },
  orderDeclined: { weight: 10, run: orderPayment(CARDS.declined, 'Denied') },
  orderChallenge: { weight: 15, run: orderChallenge },
  preAuthCaptureRefund: { weight: 20, run: preAuthCaptureRefund },
  tokenPayment: { weight: 20, run: tokenPayment },
};

async function createOrder(client) {
  const order = await client.expect(201, 'POST', '/api/v2/orders', {
    amount: '25.00',
    currency: 'EUR',
    orderRef: `chaos-${randomUUID().slice(0, 8)}`,
    orderOptions: { redirectUrl: 'https://shop.example.com/return' },
  });
  return order.orderId;
}

/** The payment's final status: its answer, or (Processing after a crash) the transaction once settled. */
async function settled(client, payment) {
  for (let polls = 0; !FINAL.has(payment.status); polls++) {
    if (polls > 120) throw new ClientError(`transaction ${payment.transactionId} stayed ${payment.status}`);
    await sleep(500);
    payment = await client.expect(200, 'GET', `/api/v2/transactions/${payment.transactionId}`);
  }
  return payment;
}

/** Pays 25.00 EUR of the order with `method` (a `card`, or a `tokenId` and its mode); its final state. */
async function payOrder(client, orderId, method) {
  const body = { type: 'card', amount: '25.00', currency: 'EUR', orderId, ...method };
  return settled(client, await client.expect(201, 'POST', '/api/v2/payment', body));
}

function orderPayment(number, expected) {
  return async (client) => {
    const orderId = await createOrder(client);
    const payment = await payOrder(client, orderId, { card: card(number) });
    if (payment.status !== expected)
      throw new ClientError(
        `payment of ${orderId} ended ${payment.status}, expected ${expected}`,
        undefined,
        {
          transactionId: payment.transactionId,
        },
      );
    return { orderId, succeeded: expected === 'Success' ? [payment.transactionId] : [] };
  };
}

async function orderChallenge(client) {
  const orderId = await createOrder(client);
  const created = await client.expect(201, 'POST', '/api/v2/payment', {
    type: 'card',
    amount: '25.00',
    currency: 'EUR',
    orderId,
    redirectUrl: 'https://shop.example.com/return',
    card: card(CARDS.challenge),
  });
  const id = created.threeDSecure?.id;
  if (!id)
    throw new ClientError(
      `challenge payment ${created.transactionId} came without threeDSecure.id (${created.status})`,
    );
  await answerChallenge(client, id);
  const payment = await settled(
    client,
    await client.expect(200, 'GET', `/api/v2/transactions/${created.transactionId}`),
  );
  if (payment.status !== 'Success')
    throw new ClientError(`challenge payment of ${orderId} ended ${payment.status}`, undefined, {
      transactionId: created.transactionId,
    });
  return { orderId, succeeded: [payment.transactionId] };
}

/** The shopper's browser running the 3DS SDK: preAuth, auth, the issuer's page and its OTP, postAuth. */
async function answerChallenge(client, id) {
  const api = (path, body = {}) =>
    client.expect(200, 'POST', `/3ds/api${path}`, body, { auth: false, key: null });
  await api(`/v2/${id}/preAuth`, { browser: { userAgent: 'chaos', language: 'en-US' } });
  const auth = (await api(`/v1/${id}/auth`, { threeDSCompInd: 'Y' })).data;
  if (!auth?.challengeUrl) throw new ClientError(`no challenge for ${id}: ${JSON.stringify(auth)}`);
  const creq = Buffer.from(
    JSON.stringify({
      threeDSServerTransID: id,
      acsTransID: auth.challengeId,
      messageVersion: auth.challengeVersion,
      messageType: 'CReq',
      challengeWindowSize: '05',
    }),
  ).toString('base64url');
  const page = await client.request('POST', auth.challengeUrl, undefined, {
    auth: false,
    key: null,
    form: { creq },
  });
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1];
  if (!action)
    throw new ClientError(`no challenge form for ${id}: ${page.status} ${page.text.slice(0, 200)}`);
  await client.request('POST', action, undefined, {
    auth: false,
    key: null,
    form: { threeDSServerTransID: id, otp: '1234', action: 'submit' },
  });
  return api(`/v2/${id}/postAuth`);
}

async function preAuthCaptureRefund(client) {
  const preAuth = await settled(
    client,
    await client.expect(201, 'POST', '/api/v2/payment', {
      type: 'card',
      amount: '100.00',
      currency: 'EUR',
      isPreAuth: true,
      card: card(CARDS.preAuth),
    }),
  );
  if (preAuth.status !== 'Success')
    throw new ClientError(`pre-auth ended ${preAuth.status}`, undefined, {
      transactionId: preAuth.transactionId,
    });
  const capture = await settled(
    client,
    await client.expect(200, 'POST', `/api/v2/capture/${preAuth.transactionId}`, { isoAmount: 6000 }),
  );
  if (capture.status !== 'Success')
    throw new ClientError(`capture of ${preAuth.transactionId} ended ${capture.status}`, undefined, {
      transactionId: capture.transactionId,
    });
  const refund = await settled(
    client,
    await client.expect(200, 'POST', `/api/v2/refund/${capture.transactionId}`, { amount: '35.00' }),
  );
  if (refund.status !== 'Success')
    throw new ClientError(`refund of ${capture.transactionId} ended ${refund.status}`, undefined, {
      transactionId: refund.transactionId,
    });
  return { orderId: null, succeeded: [preAuth.transactionId, capture.transactionId, refund.transactionId] };
}

async function tokenPayment(client) {
  const token = await client.expect(201, 'POST', '/api/v2/tokens', {
    Type: 'Card',
    CustomReference: `chaos-${randomUUID()}`,
    Card: { ...card(CARDS.approved), aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', eci: '02' },
  });
  const orderId = await createOrder(client);
  const payment = await payOrder(client, orderId, {
    tokenId: token.tokenId,
    transactionMode: 'merchantInitiatedRecurring',
  });
  if (payment.status !== 'Success')
    throw new ClientError(`token payment of ${orderId} ended ${payment.status}`, undefined, {
      transactionId: payment.transactionId,
    });
  return { orderId, succeeded: [payment.transactionId] };
}

/** Picks a flow by weight. */
export function pickFlow(random = Math.random()) {
  const total = Object.values(FLOWS).reduce((sum, flow) => sum + flow.weight, 0);
  let at = random * total;
  for (const [name, flow] of Object.entries(FLOWS)) {
    at -= flow.weight;
    if (at < 0) return [name, flow];
  }
  return Object.entries(FLOWS)[0];
}
