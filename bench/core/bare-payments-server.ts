// The bare baseline of the payments benchmark: Fastify + pg and nothing else, doing the writes of a
// frictionless card payment. Same request body (Fastify's JSON parser), same API-key check
// (SHA-256 of the key, looked up in memory, as the services' key registry does once warmed up),
// same tables (the payments migrations, run against its own database), same pool size as a
// service (DATABASE_POOL_SIZE, default 10), and per request one DB transaction:
//   BEGIN; INSERT INTO transactions (...); INSERT INTO outbox (...); COMMIT
// (plus an INSERT INTO three_ds_sessions with BARE_3DS_ROW=true, which the service also writes).
// No relay, no validation framework, no logging: what is left is the cost of the writes and HTTP.
//
// Environment: HTTP_PORT, HTTP_HOST (127.0.0.1), DATABASE_URL, DATABASE_POOL_SIZE (10),
// BARE_API_KEY_HASHES (JSON { sha256(key): { merchantId, mode } }), BARE_3DS_ROW (false).
// Routes: POST /api/v2/payment and POST /bench-bare/api/v2/payment (the prefix the edge routes here).
import { createHash, randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
interface Merchant {
  merchantId: string;
  mode: string;
}

interface PaymentBody {
  amount?: unknown;
  currency?: unknown;
  orderRef?: string;
  redirectUrl?: string;
  card?: { number?: unknown; expiration?: string; holder?: string };
}

const keys = new Map(
  Object.entries(JSON.parse(process.env.BARE_API_KEY_HASHES ?? '{}') as Record<string, Merchant>),
);
const WITH_3DS_ROW = process.env.BARE_3DS_ROW === 'true';
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'byrd-bench-bare',
});

const INSERT_TRANSACTION = `INSERT INTO transactions (id, merchant_id, merchant_mode, order_id, order_ref,
  operation_type, source_transaction_id, payment_method, status, code, description, iso_amount, currency,
  captured_iso_amount, refunded_iso_amount, released_iso_amount, brand, masked_card_number, card_expiration,
  holder, token_id, is_pre_auth, transaction_mode, initiated_from, acquirer, redirect_url, request_id,
  fingerprint, async_details, expires_at, created_at, updated_at)
  VALUES ($1, $2, $3, NULL, $4, 'Payment', NULL, 'card', 'Success', 'BYRD200', $5, $6, $7, 0, 0, 0, $8, $9, $10,
  $11, NULL, false, 'None', 'Server', 'SIMULATED', $12, $13, $14, NULL, $15, $16, $16)`;
const INSERT_SESSION = `INSERT INTO three_ds_sessions (id, transaction_id, merchant_id, status, challenge_required,
  acs_trans_id, ds_transaction_id, protocol_version, trans_status, eci, aav, challenge_completed_at, expires_at,
  created_at, updated_at) VALUES ($1, $2, $3, 'Authorized', false, $4, $5, '2.2.0', 'Y', '02', $6, $7, $8, $7, $7)`;
const INSERT_OUTBOX = `INSERT INTO outbox (id, subject, payload) VALUES ($1, $2, $3)`;
const DESCRIPTION = 'Operation successfully completed';

function error(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).send({ code, description: message, message, requestId: reply.request.id });
}

/** A valid request's merchant and fields, or the refusal to answer. */
function validate(request: FastifyRequest<{ Body: PaymentBody | undefined }>) {
  const header = request.headers['x-api-key'];
  const merchant =
    typeof header === 'string' && UUID.test(header)
      ? keys.get(createHash('sha256').update(header.trim().toLowerCase()).digest('hex'))
      : undefined;
  if (!merchant) return { refusal: [401, 'BYRD401', 'The API key is not valid'] as const };
  const body = request.body;
  const number = body?.card?.number;
  if (
    !body ||
    typeof number !== 'string' ||
    !/^\d{12,19}$/.test(number) ||
    typeof body.amount !== 'string' ||
    !/^\d+\.\d{2}$/.test(body.amount) ||
    typeof body.currency !== 'string'
  )
    return { refusal: [400, 'BYRD900', 'Invalid input'] as const };
  return { refusal: null, merchant, body, number, amount: body.amount, currency: body.currency };
}

type Payment = Extract<ReturnType<typeof validate>, { refusal: null }>;

/** The transaction.payment.success event the outbox row holds (the relay would publish it). */
function outboxEvent(p: Payment, transactionId: string, now: Date, isoAmount: number) {
  return {
    id: randomUUID(),
    type: 'transaction.payment.success',
    occurredAt: now.toISOString(),
    merchantId: p.merchant.merchantId,
    paymentMethod: 'card',
    referenceIds: [transactionId],
    data: {
      transactionId,
      orderId: null,
      orderRef: p.body.orderRef ?? null,
      status: 'Success',
      operationType: 'Payment',
      amount: p.amount,
      isoAmount,
      currency: p.currency,
      code: 'BYRD200',
      description: DESCRIPTION,
      sourceTransactionId: null,
      paymentMethod: 'card',
      initiatedFrom: 'Server',
    },
  };
}

/** The rows of one payment, in one transaction: transactions, (three_ds_sessions,) outbox. */
async function write(
  p: Payment,
  ids: { id: string; sessionId: string; fingerprint: string; requestId: string },
) {
  const { merchant, body } = p;
  const now = new Date();
  const expiresAt = new Date(now.getTime() + 15 * 60_000);
  const isoAmount = Math.round(Number(p.amount) * 100);
  const masked = `${p.number.slice(0, 6)}${'*'.repeat(p.number.length - 10)}${p.number.slice(-4)}`;
  const envelope = outboxEvent(p, ids.id, now, isoAmount);
  const transaction = [
    ids.id,
    merchant.merchantId,
    merchant.mode,
    body.orderRef ?? null,
    DESCRIPTION,
    isoAmount,
    p.currency,
    'MASTER',
    masked,
    body.card?.expiration ?? null,
    body.card?.holder ?? null,
    body.redirectUrl ?? null,
    ids.requestId,
    ids.fingerprint,
    expiresAt,
    now,
  ];
  const session = [
    ids.sessionId,
    ids.id,
    merchant.merchantId,
    randomUUID(),
    randomUUID(),
    'AAAA',
    now,
    expiresAt,
  ];
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(INSERT_TRANSACTION, transaction);
    if (WITH_3DS_ROW) await client.query(INSERT_SESSION, session);
    await client.query(INSERT_OUTBOX, [envelope.id, envelope.type, envelope]);
    await client.query('COMMIT');
  } catch (cause) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw cause;
  } finally {
    client.release();
  }
  return { isoAmount, expiresAt };
}

async function pay(request: FastifyRequest<{ Body: PaymentBody | undefined }>, reply: FastifyReply) {
  const payment = validate(request);
  if (payment.refusal) return error(reply, payment.refusal[0], payment.refusal[1], payment.refusal[2]);
  const { body } = payment;
  const ids = {
    id: randomUUID(),
    sessionId: randomUUID(),
    fingerprint: randomUUID(),
    requestId: UUID.test(request.id) ? request.id : randomUUID(),
  };
  const { isoAmount, expiresAt } = await write(payment, ids);
  reply.code(201);
  return {
    type: 'card',
    currency: payment.currency,
    orderRef: body.orderRef ?? null,
    acquirer: 'SIMULATED',
    brand: 'MASTER',
    paymentMethod: 'card',
    redirectUrl: body.redirectUrl ?? null,
    fingerprint: ids.fingerprint,
    action: null,
    code: 'BYRD200',
    description: DESCRIPTION,
    status: 'Success',
    requestId: ids.requestId,
    expiresAt: expiresAt.toISOString(),
    acceptTokenization: true,
    transactionMode: 'None',
    transactionId: ids.id,
    amount: payment.amount,
    isoAmount,
    isPreAuth: false,
    orderId: null,
    threeDSecure: {
      id: ids.sessionId,
      verificationMethod: 'ThreeDSecure',
      channel: 'Browser',
      status: 'Authorized',
    },
  };
}

const app = Fastify({
  logger: false,
  bodyLimit: 1_048_576,
  genReqId: (req) => {
    const sent = req.headers['x-request-id'];
    return typeof sent === 'string' && sent.length <= 128 ? sent : randomUUID();
  },
});
app.post<{ Body: PaymentBody | undefined }>('/api/v2/payment', pay);
app.post<{ Body: PaymentBody | undefined }>('/bench-bare/api/v2/payment', pay);
app.get('/health/ready', async (_request, reply) => {
  try {
    await pool.query('SELECT 1');
    return { status: 'ok' };
  } catch {
    return reply.code(503).send({ status: 'down' });
  }
});

await app.listen({ port: Number(process.env.HTTP_PORT ?? 0), host: process.env.HTTP_HOST ?? '127.0.0.1' });
console.log(`bare payments handler listening on ${JSON.stringify(app.server.address())}`);

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
