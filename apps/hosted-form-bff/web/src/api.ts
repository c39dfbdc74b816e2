// The BFF's API for this order (`{checkout_url}/api/v2/orders/{orderId}...`), authenticated by the
// order's checkout key in a header (never in the URL).
import type {
  CheckoutCancelResult,
  CheckoutOrderView,
  CheckoutPaymentRequest,
  CheckoutPaymentView,
} from '@byrd/contracts/browser';

const CHECKOUT_KEY_HEADER = 'x-checkout-key';
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

  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      [CHECKOUT_KEY_HEADER]: checkoutKey,
    };
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
    pay: (request) => call<CheckoutPaymentView>('POST', '/payments', request),
    getPayment: (transactionId) =>
      call<CheckoutPaymentView>('GET', `/payments/${encodeURIComponent(transactionId)}`),
    cancel: () => call<CheckoutCancelResult>('POST', '/cancel', {}),
  };
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
