import type {
  CaptureRequest,
  CaptureResponse,
  CheckoutOriginsResponse,
  CompletePaymentRequest,
  CreateOrderRequest,
  CreatePaymentRequest,
  CreateTokenRequest,
  CreateTokenResponse,
  ListTokensQuery,
  ListTransactionsQuery,
  OrderDetailsResponse,
  OrderResponse,
  PaymentResponse,
  RefundRequest,
  RefundResponse,
  ReleaseRequest,
  ReleaseResponse,
  TokenListResponse,
  TokenResponse,
  TransactionListResponse,
  TransactionResponse,
  TransactionStatus,
} from '@byrd/contracts';
import { ByrdError } from '../errors.js';
import { segment, sleep, type HttpTransport, type RequestOptions } from '../http.js';
import { envelopeHasMore, everyItem, MAX_PAGE_SIZE } from '../paging.js';

/** `/api/v2/orders`: an order is what the hosted form collects payment for. */
export class Orders {
  constructor(private readonly http: HttpTransport) {}

  /** Creates an order (201): `orderId`, `checkoutKey`, `checkoutUrl` (the hosted form, ready to open). */
  create(order: CreateOrderRequest, options?: RequestOptions): Promise<OrderResponse> {
    return this.http.call({ api: 'gateway', method: 'POST', path: '/api/v2/orders', body: order, options });
  }

  /** Reads an order with its status and transactions: validate a payment after the redirect. */
  get(orderId: string, options?: RequestOptions): Promise<OrderDetailsResponse> {
    return this.http.call({
      api: 'gateway',
      method: 'GET',
      path: `/api/v2/orders/${segment(orderId)}`,
      options,
    });
  }
}

/** Amount of a capture, refund or release; without one, the whole remaining amount. */
export type OperationAmount = CaptureRequest & RefundRequest & ReleaseRequest;

/**
 * `/api/v2/payment` and its operations. Card payments answer at once, or `BYRD207` with an
 * `action` for 3D Secure (see {@link shopperAction}); `multibanco` and `mbway` answer `BYRD201`
 * Processing until the shopper pays (see {@link Transactions.waitForOutcome}).
 */
export class Payments {
  constructor(private readonly http: HttpTransport) {}

  /** Creates a payment (201, also while 3DS is pending). Send it from your backend only: it carries card data. */
  async create(payment: CreatePaymentRequest, options?: RequestOptions): Promise<PaymentResponse> {
    return this.post<PaymentResponse>('/api/v2/payment', payment, options);
  }

  /** Charges a two-step payment (created without a card) with a card or a token. */
  async pay(
    transactionId: string,
    payment: CompletePaymentRequest,
    options?: RequestOptions,
  ): Promise<PaymentResponse> {
    return this.post<PaymentResponse>(`/api/v2/payment/${segment(transactionId)}/pay`, payment, options);
  }

  /** Captures (part of) a successful pre-authorisation. */
  async capture(
    transactionId: string,
    amount: OperationAmount = {},
    options?: RequestOptions,
  ): Promise<CaptureResponse> {
    return this.post<CaptureResponse>(`/api/v2/capture/${segment(transactionId)}`, amount, options);
  }

  /** Refunds (part of) a payment or capture; `BYRD231` beyond the remaining balance, `BYRD230` once fully refunded. */
  async refund(
    transactionId: string,
    amount: OperationAmount = {},
    options?: RequestOptions,
  ): Promise<RefundResponse> {
    return this.post<RefundResponse>(`/api/v2/refund/${segment(transactionId)}`, amount, options);
  }

  /** Releases (voids) an uncaptured pre-authorisation, or part of it. */
  async release(
    transactionId: string,
    amount: OperationAmount = {},
    options?: RequestOptions,
  ): Promise<ReleaseResponse> {
    return this.post<ReleaseResponse>(`/api/v2/release/${segment(transactionId)}`, amount, options);
  }

  private post<T>(path: string, body: unknown, options?: RequestOptions): Promise<T> {
    return this.http.call<T>({ api: 'gateway', method: 'POST', path, body, options });
  }
}

/** What the shopper must do before a payment or tokenization completes, or null when nothing. */
export function shopperAction(
  response: Pick<PaymentResponse, 'code' | 'action'> | Pick<CreateTokenResponse, 'code' | 'action'>,
): { type: 'redirect'; url: string } | null {
  return response.code === 'BYRD207' && response.action ? response.action : null;
}

/**
 * Statuses that are not an outcome yet, as the hosted form follows them: the shopper or the acquirer
 * still has to act, or the acquirer's answer was lost (`TemporaryFailed`, BYRD203: "query the
 * transaction to confirm its status"), which the platform's recovery settles from what the acquirer
 * holds (a minute by default). Every other status is final.
 */
const PENDING_STATUSES: readonly TransactionStatus[] = [
  'Created',
  'Processing',
  'TemporaryFailed',
  'PendingMerchantAction',
];

export interface WaitOptions {
  /** Give up after this long. Default 60 000 ms. */
  timeoutMs?: number;
  /** Time between two reads. Default 1 000 ms. */
  intervalMs?: number;
  /** Stops waiting. */
  signal?: AbortSignal;
}

/** A transaction still pending when {@link Transactions.waitForOutcome} gave up. */
export class ByrdTimeoutError extends ByrdError {
  override name = 'ByrdTimeoutError';
  constructor(readonly transaction: TransactionResponse) {
    super(`Transaction ${transaction.transactionId} is still ${transaction.status}`);
  }
}

/** `/api/v2/transactions`: payments, pre-authorisations, captures, refunds and releases. */
export class Transactions {
  constructor(private readonly http: HttpTransport) {}

  /** Reads a transaction: status, operationType, brand, code, amounts and the 3DS result. */
  get(transactionId: string, options?: RequestOptions): Promise<TransactionResponse> {
    const path = `/api/v2/transactions/${segment(transactionId)}`;
    return this.http.call({ api: 'gateway', method: 'GET', path, options });
  }

  /** One page of transactions (by `orderId` and/or `orderRef`), newest first. */
  list(query: ListTransactionsQuery = {}, options?: RequestOptions): Promise<TransactionListResponse> {
    return this.http.call({
      api: 'gateway',
      method: 'GET',
      path: '/api/v2/transactions',
      query: { ...query },
      options,
    });
  }

  /** Every matching transaction, newest first, fetched page by page as you iterate. */
  listAll(
    query: Omit<ListTransactionsQuery, 'pageNumber'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<TransactionResponse, void, undefined> {
    return everyItem(
      async (pageNumber) => {
        const page = await this.list({ pageSize: MAX_PAGE_SIZE, ...query, pageNumber }, options);
        return { items: page.data, hasMore: envelopeHasMore(page), total: page.pagination.totalAvailable };
      },
      (transaction) => transaction.transactionId,
      MAX_PAGE_SIZE,
    );
  }

  /**
   * Reads the transaction until its status is final (not `Created`, `Processing`, `TemporaryFailed`
   * or `PendingMerchantAction`): the shopper finished 3D Secure, paid a Multibanco reference,
   * answered in MB WAY, the payment lapsed, or the recovery settled a payment whose acquirer answer
   * was lost. Throws {@link ByrdTimeoutError} (with the transaction as last read) when none came
   * within `timeoutMs`. Webhooks tell you the same without polling; this is for scripts and tests.
   */
  async waitForOutcome(transactionId: string, wait: WaitOptions = {}): Promise<TransactionResponse> {
    const deadline = Date.now() + (wait.timeoutMs ?? 60_000);
    let last: TransactionResponse | null = null;
    for (;;) {
      // Each read ends at the deadline too, its own retries included (else one read of a hung
      // gateway could take its four 30 s attempts past it).
      const bounded = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
      const signal = wait.signal ? AbortSignal.any([wait.signal, bounded]) : bounded;
      try {
        last = await this.get(transactionId, { signal });
      } catch (error) {
        if (last && bounded.aborted && !wait.signal?.aborted) throw new ByrdTimeoutError(last);
        throw error;
      }
      if (!PENDING_STATUSES.includes(last.status)) return last;
      if (Date.now() >= deadline) throw new ByrdTimeoutError(last);
      await sleep(Math.min(wait.intervalMs ?? 1_000, deadline - Date.now()), wait.signal);
    }
  }
}

/** `/api/v2/tokens`: the card vault. */
export class Tokens {
  constructor(private readonly http: HttpTransport) {}

  /** Stores a card (201); `BYRD207` with an `action` when the cardholder must confirm it with 3DS. */
  create(token: CreateTokenRequest, options?: RequestOptions): Promise<CreateTokenResponse> {
    return this.http.call({ api: 'gateway', method: 'POST', path: '/api/v2/tokens', body: token, options });
  }

  /** Reads a token: brand, expiration, masked number. */
  get(tokenId: string, options?: RequestOptions): Promise<TokenResponse> {
    return this.http.call({
      api: 'gateway',
      method: 'GET',
      path: `/api/v2/tokens/${segment(tokenId)}`,
      options,
    });
  }

  /** One page of tokens (by `customReference` and `isExpired`), newest first. */
  list(query: ListTokensQuery = {}, options?: RequestOptions): Promise<TokenListResponse> {
    return this.http.call({
      api: 'gateway',
      method: 'GET',
      path: '/api/v2/tokens',
      query: { ...query },
      options,
    });
  }

  /** Every matching token, newest first, fetched page by page as you iterate. */
  listAll(
    query: Omit<ListTokensQuery, 'pageNumber'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<TokenResponse, void, undefined> {
    return everyItem(
      async (pageNumber) => {
        const page = await this.list({ pageSize: MAX_PAGE_SIZE, ...query, pageNumber }, options);
        return { items: page.data, hasMore: envelopeHasMore(page), total: page.pagination.totalAvailable };
      },
      (token) => token.tokenId,
      MAX_PAGE_SIZE,
    );
  }

  /** Deletes a token: the stored card is erased. */
  delete(tokenId: string, options?: RequestOptions): Promise<void> {
    return this.http.call({
      api: 'gateway',
      method: 'DELETE',
      path: `/api/v2/tokens/${segment(tokenId)}`,
      options,
    });
  }
}

/** `/api/v2/checkout-origins`: your sites the hosted form may return to and be framed by. */
export class CheckoutOrigins {
  constructor(private readonly http: HttpTransport) {}

  async get(options?: RequestOptions): Promise<string[]> {
    const path = '/api/v2/checkout-origins';
    return (await this.http.call<CheckoutOriginsResponse>({ api: 'gateway', method: 'GET', path, options }))
      .origins;
  }

  /** Replaces the list (`[]` clears it); answers the normalised origins. */
  async set(origins: string[], options?: RequestOptions): Promise<string[]> {
    const path = '/api/v2/checkout-origins';
    const body = { origins };
    return (
      await this.http.call<CheckoutOriginsResponse>({ api: 'gateway', method: 'PUT', path, body, options })
    ).origins;
  }
}
