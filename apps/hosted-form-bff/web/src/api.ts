// The BFF's API for this order (`{checkout_url}/api/v2/orders/{orderId}...`), authenticated by the
// order's checkout key in a header (never in the URL).
import type {
  CheckoutCancelResult,
  CheckoutOrderView,
  CheckoutPaymentRequest,
  CheckoutPaymentView,
} from '@byrd/contracts/browser';

const CHECKOUT_KEY_HEADER = 'x-checkout-key';
const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The sessionStorage item of an order's current payment attempt, followed by its id. */
const ATTEMPT_SLOT = 'byrd-checkout-attempt:';
/**
 * Longer than the BFF's own wait for a payment (an order read, then up to 30 s for payments), so a
 * slow payment ends in the BFF's answer rather than in the browser giving up on a charged card.
 */
const TIMEOUT_MS = 45_000;

/** A failed call: the API's error body (`code`, `description`, field `errors`), or status 0 offline. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    readonly description: string,
    readonly fields: { field: string; message: string }[] = [],
  ) {
    super(description);
    this.name = 'ApiError';
  }
}

export interface CheckoutApi {
  getOrder(): Promise<CheckoutOrderView>;
  pay(request: CheckoutPaymentRequest): Promise<CheckoutPaymentView>;
  getPayment(transactionId: string): Promise<CheckoutPaymentView>;
  cancel(): Promise<CheckoutCancelResult>;
}

export function createCheckoutApi(orderId: string, checkoutKey: string): CheckoutApi {
  const orderUrl = new URL(
    `${import.meta.env.BASE_URL}api/v2/orders/${encodeURIComponent(orderId)}`,
    window.location.origin,
  ).href;

  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<T> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      [CHECKOUT_KEY_HEADER]: checkoutKey,
    };
    if (idempotencyKey) headers[IDEMPOTENCY_HEADER] = idempotencyKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(orderUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch {
      throw new ApiError(0, null, 'Network error');
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) throw toApiError(response.status, parsed);
    return parsed as T;
  }

  return {
    getOrder: () => call<CheckoutOrderView>('GET', ''),
    pay: async (request) => {
      const attempt = attemptKey(orderId, request);
      try {
        const payment = await call<CheckoutPaymentView>('POST', '/payments', request, attempt);
        // An attempt that ended without money is over: trying again is a new attempt.
        if (FAILED.includes(payment.status)) endAttempt(orderId);
        return payment;
      } catch (failure) {
        // A final refusal ends the attempt too; a lost answer (offline, 5xx), a 409 or a 429 keep
        // it, so sending again answers what the first request did instead of paying twice.
        const status = failure instanceof ApiError ? failure.status : 0;
        if (status >= 400 && status < 500 && ![408, 409, 429].includes(status)) endAttempt(orderId);
        throw failure;
      }
    },
    getPayment: (transactionId) =>
      call<CheckoutPaymentView>('GET', `/payments/${encodeURIComponent(transactionId)}`),
    cancel: () => call<CheckoutCancelResult>('POST', '/cancel', {}),
  };
}

/** Outcomes of a payment that ended holding no money. */
const FAILED: readonly string[] = ['Denied', 'Error', 'Canceled'];

/**
 * The key of the shopper's current Multibanco or MB WAY attempt (one method and its inputs), kept
 * in this tab per order across a reload: the same attempt sent again (a double click, a retry after
 * a lost answer) is answered with the one reference or MB WAY request it made. Another method or
 * phone number is another attempt, with a new key. None for a card: its inputs are not kept, and
 * the order's payment lock already holds it to one payment at a time.
 */
function attemptKey(orderId: string, request: CheckoutPaymentRequest): string | undefined {
  if (request.type !== 'multibanco' && request.type !== 'mbway') return undefined;
  const inputs = JSON.stringify([request.type, request.mbway?.phoneNumber ?? null]);
  const slot = `${ATTEMPT_SLOT}${orderId}`;
  try {
    const kept = JSON.parse(sessionStorage.getItem(slot) ?? 'null') as { inputs?: unknown; key?: unknown };
    if (kept?.inputs === inputs && typeof kept.key === 'string') return kept.key;
  } catch {
    // Unreadable (storage off, or not ours): a new attempt.
  }
  const key = newKey();
  try {
    sessionStorage.setItem(slot, JSON.stringify({ inputs, key }));
  } catch {
    // Storage off (private mode): the key still covers this page's own retries.
  }
  return key;
}

function endAttempt(orderId: string): void {
  try {
    sessionStorage.removeItem(`${ATTEMPT_SLOT}${orderId}`);
  } catch {
    // Storage off: nothing kept.
  }
}

function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function toApiError(status: number, body: unknown): ApiError {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof record.code === 'string' ? record.code : null;
  const description =
    typeof record.description === 'string' ? record.description : `Request failed (HTTP ${status})`;
  const fields = Array.isArray(record.errors)
    ? record.errors.flatMap((item: unknown) => {
        const error = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
        return typeof error.field === 'string'
          ? [{ field: error.field, message: typeof error.message === 'string' ? error.message : '' }]
          : [];
      })
    : [];
  return new ApiError(status, code, description, fields);
}
