import { randomUUID } from 'node:crypto';
import type { ChargebackAction, ErrorBody, EventName, OrderResponse, PaymentResponse } from '@byrd/contracts';
import type { ByrdClient } from '../client.js';
import { ByrdApiError } from '../errors.js';
import { segment } from '../http.js';

/** What a flow needs: the merchant's client and where the platform answers. */
export interface FlowContext {
  byrd: ByrdClient;
  apiKey: string;
  baseUrl: string;
}

/** The resource the expected event is about: each id given must equal the delivery content's. */
export interface EventSubject {
  orderId?: string;
  transactionId?: string;
  chargebackId?: string;
}

/** What a flow did: the lines to print, and what its event must be about. */
export interface FlowResult {
  steps: string[];
  about: EventSubject;
}

export interface Flow {
  /** One line: what the flow does, as `trigger --list` could explain it. */
  does: string;
  run(context: FlowContext): Promise<FlowResult>;
  /** How long its event may take to appear. Default {@link DEFAULT_WAIT_MS}. */
  waitMs?: number;
}

/** An event the public sandbox API has no way to cause: `trigger` says why instead of faking it. */
export interface Untriggerable {
  untriggerable: string;
}

export const DEFAULT_WAIT_MS = 15_000;

// Sandbox test cards and amounts (README "Sandbox test cards").
const SUCCESS_CARD = '5448280000000007';
const VISA_SUCCESS_CARD = '4242424242424242';
const CHALLENGE_CARD = '5555341244441115';
const DENIED_CARD = '4000000000000002';
const ERROR_CARD = '4000000000000119';
const TIMEOUT_CARD = '5201282999005515';
/** MM/YY two years ahead of today: a sandbox card that is never expired, whatever the date. */
function futureExpiration(now = new Date()): string {
  const month = String(now.getUTCMonth() + 1).padStart(2, '0');
  return `${month}/${String((now.getUTCFullYear() + 2) % 100).padStart(2, '0')}`;
}

const card = (number: string) => ({
  number,
  expiration: futureExpiration(),
  cvv: '123',
  holder: 'Byrd Trigger',
});
const SHOPPER_RETURN_URL = 'https://example.com/byrd-trigger/return';

const ref = (what: string) => `trigger-${what}-${randomUUID().slice(0, 8)}`;

async function createOrder(
  { byrd }: FlowContext,
  amount: string,
  extra: { expiresIn?: string } = {},
): Promise<OrderResponse> {
  return byrd.orders.create({ amount, currency: 'EUR', orderRef: ref('order'), ...extra });
}

async function payByCard(
  { byrd }: FlowContext,
  amount: string,
  number: string,
  extra: { orderId?: string; isPreAuth?: boolean } = {},
): Promise<PaymentResponse> {
  return byrd.payments.create({
    type: 'card',
    amount,
    currency: 'EUR',
    orderRef: ref('payment'),
    redirectUrl: SHOPPER_RETURN_URL,
    card: card(number),
    ...extra,
  });
}

/** The flow's own expectation: a step that did not do what the sandbox promises stops it. */
function expectStatus(what: string, answer: { status: string; code: string }, status: string): void {
  if (answer.status !== status) {
    throw new Error(`${what} answered ${answer.status} (${answer.code}); expected ${status}`);
  }
}

const paymentLine = (p: PaymentResponse) =>
  `${p.isPreAuth ? 'pre-authorisation' : `${p.paymentMethod} payment`} ${p.transactionId} of ${p.amount} ${p.currency}: ${p.status} (${p.code})`;

// ---- building blocks shared by several flows ----

async function paidOrder(context: FlowContext, amount: string) {
  const order = await createOrder(context, amount);
  const payment = await payByCard(context, amount, SUCCESS_CARD, { orderId: order.orderId });
  expectStatus('the card payment', payment, 'Success');
  return {
    order,
    payment,
    steps: [
      `created order ${order.orderId} of ${order.amount} EUR`,
      `paid it by card: ${paymentLine(payment)}`,
    ],
  };
}

async function preAuthorised(context: FlowContext, amount = '100.00') {
  const preAuth = await payByCard(context, amount, VISA_SUCCESS_CARD, { isPreAuth: true });
  expectStatus('the pre-authorisation', preAuth, 'Success');
  return { preAuth, steps: [`pre-authorised by card: ${paymentLine(preAuth)}`] };
}

function captureFlow(amount: string, outcome: string): Flow {
  return {
    does: `pre-authorises 100.00 EUR and captures ${amount} (the sandbox answers ${outcome})`,
    async run(context) {
      const { preAuth, steps } = await preAuthorised(context);
      const capture = await context.byrd.payments.capture(preAuth.transactionId, { amount });
      expectStatus('the capture', capture, outcome);
      steps.push(`captured ${amount}: capture ${capture.transactionId} ${capture.status} (${capture.code})`);
      return { steps, about: { transactionId: capture.transactionId } };
    },
  };
}

function refundFlow(amount: string, outcome: string): Flow {
  return {
    does: `pays 50.00 EUR by card and refunds ${amount} (the sandbox answers ${outcome})`,
    async run(context) {
      const payment = await payByCard(context, '50.00', SUCCESS_CARD);
      expectStatus('the card payment', payment, 'Success');
      const refund = await context.byrd.payments.refund(payment.transactionId, { amount });
      expectStatus('the refund', refund, outcome);
      return {
        steps: [
          `paid by card: ${paymentLine(payment)}`,
          `refunded ${amount}: refund ${refund.transactionId} ${refund.status} (${refund.code})`,
        ],
        about: { transactionId: refund.transactionId },
      };
    },
  };
}

function cardFlow(does: string, number: string, outcome: string, isPreAuth: boolean): Flow {
  return {
    does,
    async run(context) {
      const payment = await payByCard(context, '25.00', number, { isPreAuth });
      expectStatus(isPreAuth ? 'the pre-authorisation' : 'the card payment', payment, outcome);
      return { steps: [paymentLine(payment)], about: { transactionId: payment.transactionId } };
    },
  };
}

/** A chargeback opened on a card payment, then moved through `moves` (each a sandbox step). */
function chargebackFlow(moves: ChargebackAction[]): Flow {
  const path = ['created', ...moves].join(' → ');
  return {
    does: `pays 50.00 EUR by card and has the scheme open a chargeback on it (${path})`,
    async run(context) {
      const payment = await payByCard(context, '50.00', SUCCESS_CARD);
      expectStatus('the card payment', payment, 'Success');
      let chargeback = await context.byrd.sandbox.openChargeback({
        transactionId: payment.transactionId,
        reason: '10.4 Fraud - Card Absent Environment',
      });
      const steps = [`paid by card: ${paymentLine(payment)}`, `opened chargeback ${chargeback.chargebackId}`];
      for (const move of moves) {
        chargeback = await context.byrd.sandbox.moveChargeback(chargeback.chargebackId, move);
        steps.push(`moved it to ${chargeback.status}`);
      }
      return { steps, about: { chargebackId: chargeback.chargebackId } };
    },
  };
}

/**
 * The shopper's cancel button of the hosted form (its backend, with the order's checkout key), on
 * the host the order's own checkoutUrl names: the gateway's locally, the checkout host on Kubernetes.
 */
async function cancelInHostedForm(order: OrderResponse): Promise<void> {
  const path = `/checkout/api/v2/orders/${segment(order.orderId)}/cancel`;
  const response = await fetch(new URL(path, order.checkoutUrl), {
    method: 'POST',
    headers: { 'x-checkout-key': order.checkoutKey, accept: 'application/json' },
  });
  if (!response.ok) {
    throw new ByrdApiError({
      status: response.status,
      body: (await response.json().catch(() => ({
        code: 'BYRD999',
        description: 'Unhandled error',
        message: `the hosted form answered ${response.status}`,
      }))) as ErrorBody,
      request: `POST ${path}`,
      requestId: response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds: undefined,
    });
  }
}

const NO_CANCELED_OPERATION =
  'nothing in the public API cancels a capture or a refund once asked (a release cancels the pre-authorisation: transaction.preauth.canceled)';

/**
 * How each event of the catalogue is produced, in catalogue order. Typed by the catalogue, so a new
 * event name without a flow (or an explanation) fails the typecheck.
 */
export const FLOWS: Record<EventName, Flow | Untriggerable> = {
  'order.created': {
    does: 'creates an order of 25.00 EUR',
    async run(context) {
      const order = await createOrder(context, '25.00');
      return {
        steps: [`created order ${order.orderId} of ${order.amount} EUR`],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.pending': {
    does: 'creates an order and starts a Multibanco payment of it (the shopper has yet to pay)',
    async run(context) {
      const order = await createOrder(context, '25.00');
      const payment = await context.byrd.payments.create({
        type: 'multibanco',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.orderId,
      });
      expectStatus('the Multibanco payment', payment, 'Processing');
      return {
        steps: [`created order ${order.orderId} of ${order.amount} EUR`, paymentLine(payment)],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.paid': {
    does: 'creates an order of 25.00 EUR and pays it with a frictionless sandbox card',
    async run(context) {
      const { order, steps } = await paidOrder(context, '25.00');
      return { steps, about: { orderId: order.orderId } };
    },
  },
  'order.refunded': {
    does: 'creates an order of 50.00 EUR, pays it by card and refunds all of it',
    async run(context) {
      const { order, payment, steps } = await paidOrder(context, '50.00');
      const refund = await context.byrd.payments.refund(payment.transactionId);
      expectStatus('the refund', refund, 'Success');
      steps.push(`refunded all of it: refund ${refund.transactionId} ${refund.status}`);
      return { steps, about: { orderId: order.orderId } };
    },
  },
  'order.canceled': {
    does: "creates an order and presses the hosted form's cancel button as the shopper",
    async run(context) {
      const order = await createOrder(context, '25.00');
      await cancelInHostedForm(order);
      return {
        steps: [`created order ${order.orderId}`, 'canceled it as the shopper does in the hosted form'],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.expired': {
    does: 'creates an order that expires in one second and lets it lapse unpaid',
    // The expiry sweep runs every ORDER_EXPIRY_SWEEP_MS (10 s by default).
    waitMs: 30_000,
    async run(context) {
      const order = await createOrder(context, '25.00', { expiresIn: '00:00:01' });
      return {
        steps: [`created order ${order.orderId} expiring at ${order.expiresAt}`, 'left it unpaid'],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.temporaryfailed': {
    does: 'creates an order and pays it with the sandbox card whose acquirer answer is lost (timeout)',
    async run(context) {
      const order = await createOrder(context, '25.00');
      const payment = await payByCard(context, '25.00', TIMEOUT_CARD, { orderId: order.orderId });
      expectStatus('the card payment', payment, 'TemporaryFailed');
      return {
        steps: [`created order ${order.orderId}`, paymentLine(payment)],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.partialpaid': {
    does: 'creates an order of 100.00 EUR, pre-authorises it by card and captures 40.00',
    async run(context) {
      const order = await createOrder(context, '100.00');
      const preAuth = await payByCard(context, '100.00', VISA_SUCCESS_CARD, {
        orderId: order.orderId,
        isPreAuth: true,
      });
      expectStatus('the pre-authorisation', preAuth, 'Success');
      const capture = await context.byrd.payments.capture(preAuth.transactionId, { amount: '40.00' });
      expectStatus('the capture', capture, 'Success');
      return {
        steps: [
          `created order ${order.orderId} of 100.00 EUR`,
          paymentLine(preAuth),
          `captured 40.00: capture ${capture.transactionId} ${capture.status}`,
        ],
        about: { orderId: order.orderId },
      };
    },
  },
  'order.partialrefunded': {
    does: 'creates an order of 100.00 EUR, pays it by card and refunds 40.00',
    async run(context) {
      const { order, payment, steps } = await paidOrder(context, '100.00');
      const refund = await context.byrd.payments.refund(payment.transactionId, { amount: '40.00' });
      expectStatus('the refund', refund, 'Success');
      steps.push(`refunded 40.00: refund ${refund.transactionId} ${refund.status}`);
      return { steps, about: { orderId: order.orderId } };
    },
  },

  'transaction.preauth.pending': {
    does: 'pre-authorises with the 3DS challenge card; the shopper has yet to answer the challenge',
    async run(context) {
      const preAuth = await payByCard(context, '25.00', CHALLENGE_CARD, { isPreAuth: true });
      expectStatus('the pre-authorisation', preAuth, 'Created');
      return {
        steps: [paymentLine(preAuth), `the shopper would answer the challenge at ${preAuth.action?.url}`],
        about: { transactionId: preAuth.transactionId },
      };
    },
  },
  'transaction.preauth.success': cardFlow(
    'pre-authorises 25.00 EUR with a frictionless sandbox card',
    VISA_SUCCESS_CARD,
    'Success',
    true,
  ),
  'transaction.preauth.failed': cardFlow(
    'pre-authorises with the declined card',
    DENIED_CARD,
    'Denied',
    true,
  ),
  'transaction.preauth.error': cardFlow('pre-authorises with the error card', ERROR_CARD, 'Error', true),
  'transaction.preauth.canceled': {
    does: 'pre-authorises 100.00 EUR by card and releases it',
    async run(context) {
      const { preAuth, steps } = await preAuthorised(context);
      const release = await context.byrd.payments.release(preAuth.transactionId);
      expectStatus('the release', release, 'Success');
      steps.push(`released it: release ${release.transactionId} ${release.status}`);
      return { steps, about: { transactionId: release.transactionId } };
    },
  },
  // A timed-out capture or refund (its outcome unknown until the recovery settles it) is pending.
  'transaction.capture.pending': captureFlow('20.01', 'TemporaryFailed'),
  'transaction.capture.success': captureFlow('40.00', 'Success'),
  'transaction.capture.failed': captureFlow('15.00', 'Denied'),
  'transaction.capture.error': captureFlow('20.02', 'Error'),
  'transaction.capture.canceled': { untriggerable: NO_CANCELED_OPERATION },
  'transaction.payment.pending': {
    does: 'starts a Multibanco payment of 25.00 EUR (the shopper has yet to pay the reference)',
    async run(context) {
      const payment = await context.byrd.payments.create({
        type: 'multibanco',
        amount: '25.00',
        currency: 'EUR',
        orderRef: ref('payment'),
      });
      expectStatus('the Multibanco payment', payment, 'Processing');
      return { steps: [paymentLine(payment)], about: { transactionId: payment.transactionId } };
    },
  },
  'transaction.payment.success': cardFlow(
    'pays 25.00 EUR with a frictionless sandbox card',
    SUCCESS_CARD,
    'Success',
    false,
  ),
  'transaction.payment.failed': cardFlow('pays with the declined card', DENIED_CARD, 'Denied', false),
  'transaction.payment.error': cardFlow('pays with the error card', ERROR_CARD, 'Error', false),
  'transaction.payment.canceled': {
    does: 'starts an MB WAY payment and refuses it in the (simulated) MB WAY app',
    async run(context) {
      const payment = await context.byrd.payments.create({
        type: 'mbway',
        amount: '25.00',
        currency: 'EUR',
        orderRef: ref('payment'),
        mbway: { phoneNumber: '+351912345678' },
      });
      const refused = await context.byrd.sandbox.simulatePayment(payment.transactionId, 'refuse');
      expectStatus('the refused MB WAY payment', refused, 'Canceled');
      return {
        steps: [
          paymentLine(payment),
          `the shopper refused it in MB WAY: ${refused.status} (${refused.code})`,
        ],
        about: { transactionId: payment.transactionId },
      };
    },
  },
  'transaction.refund.pending': refundFlow('30.01', 'TemporaryFailed'),
  'transaction.refund.success': refundFlow('40.00', 'Success'),
  'transaction.refund.failed': refundFlow('15.00', 'Denied'),
  'transaction.refund.error': refundFlow('30.02', 'Error'),
  'transaction.refund.canceled': { untriggerable: NO_CANCELED_OPERATION },

  'chargeback.created': chargebackFlow([]),
  'chargeback.disputing': chargebackFlow(['disputing']),
  'chargeback.pendingaction': chargebackFlow(['pendingaction']),
  'chargeback.closed': chargebackFlow(['closed']),
  'chargeback.won': chargebackFlow(['disputing', 'won']),
  'chargeback.lost': chargebackFlow(['lost']),
};
