// Following what the backend settles later (a payment, an order another attempt holds) by reading
// it again on a timer: the one loop of every page that waits.
import {
  type CheckoutOrderView,
  type CheckoutPaymentView,
  OPEN_ORDER_STATUSES,
} from '@byrd/contracts/browser';
import type { CheckoutApi } from './api.js';
import { timing } from './timings.js';

/**
 * A payment's outcome is not known yet: at the shopper (3DS, MB WAY), at the acquirer, or lost on
 * the way back (`TemporaryFailed`, BYRD203), which payments' recovery settles from what the acquirer
 * holds after ACQUIRER_RECOVERY_AFTER_MS (60 s by default). Every other status is final.
 */
const PENDING: readonly string[] = ['Created', 'Processing', 'TemporaryFailed', 'PendingMerchantAction'];

export function isPending(status: string): boolean {
  return PENDING.includes(status);
}

/**
 * An open order an attempt holds (payments' lock): nothing to pay here until that attempt ends. Not
 * one an authorised pre-authorisation holds: that lasts until the merchant captures or releases it.
 */
export function isBeingPaid(order: CheckoutOrderView): boolean {
  return order.paymentLocked && !order.authorized && OPEN_ORDER_STATUSES.includes(order.status);
}

export interface Follow<T> {
  read: () => Promise<T>;
  /** True once the value is final: the loop hands it to onSettled and stops. */
  settled: (value: T) => boolean;
  onSettled: (value: T) => void;
  /** Every value read, final or not. */
  onRead?: (value: T) => void;
  /** Nothing final after `forMs`: the loop stops. */
  onGaveUp?: () => void;
  /** The first read at once (else after one interval). */
  immediately?: boolean;
  /** Between two reads (default: the page's `followEveryMs`). */
  everyMs?: number;
}

/**
 * Long past an MB WAY request's expiry and several rounds of payments' recovery (its delay plus
 * sweep): what has not settled by then waits for someone, and the page stops asking on its own.
 */
const FOR_MS = 10 * 60_000;

/** Reads until the value settles or FOR_MS passed; a failed read is tried again next time. Returns stop(). */
export function follow<T>(options: Follow<T>): () => void {
  let stopped = false;
  let timer: number | undefined;
  const startedAt = Date.now();
  const everyMs = () => options.everyMs ?? timing('followEveryMs');
  const tick = async () => {
    const answer = await options.read().then(
      (value) => ({ value }),
      () => null, // a network blip: the next tick asks again
    );
    if (stopped) return;
    if (answer) {
      options.onRead?.(answer.value);
      if (options.settled(answer.value)) return options.onSettled(answer.value);
    }
    if (Date.now() - startedAt > FOR_MS) return options.onGaveUp?.();
    timer = window.setTimeout(() => void tick(), everyMs());
  };
  timer = window.setTimeout(() => void tick(), options.immediately ? 0 : everyMs());
  return () => {
    stopped = true;
    window.clearTimeout(timer);
  };
}

/** Follows a payment until its outcome is final. */
export function followPayment(
  api: CheckoutApi,
  transactionId: string,
  handlers: Omit<Follow<CheckoutPaymentView>, 'read' | 'settled'>,
): () => void {
  return follow({
    read: () => api.getPayment(transactionId),
    settled: (payment) => !isPending(payment.status),
    ...handlers,
  });
}

/**
 * Resolves once the order shows a payment's success (paid, or authorised by a pre-authorisation) or
 * has otherwise moved on, and at the latest after `orderShowsPaymentWaitMs`. The merchant's page
 * checks the order when the shopper arrives (GET /api/v2/orders/{orderId}), and orders learns of a
 * payment from its event, a moment after payments answered: leaving at once could show it pending.
 */
export function orderShowsPayment(api: CheckoutApi): Promise<void> {
  return new Promise((resolve) => {
    const waitMs = timing('orderShowsPaymentWaitMs');
    const done = () => {
      window.clearTimeout(deadline);
      stopReading();
      resolve();
    };
    // The one bound of the wait, a read that hangs included.
    const deadline = window.setTimeout(done, waitMs);
    const stopReading = follow({
      read: () => api.getOrder(),
      settled: (order) => order.authorized || !OPEN_ORDER_STATUSES.includes(order.status),
      onSettled: done,
      immediately: true,
      everyMs: timing('orderShowsPaymentEveryMs'),
    });
  });
}
