import { HttpTransport, type ByrdClientOptions } from './http.js';
import { CheckoutOrigins, Orders, Payments, Tokens, Transactions } from './resources/gateway.js';
import { Sandbox } from './resources/sandbox.js';
import { Webhooks } from './resources/webhooks.js';

/**
 * The merchant API of the Byrd payment platform. Every state-changing call carries an
 * idempotency key (one per call, reused by its retries); connection errors, 5xx, 429 and 409
 * BYRD409 are retried with backoff; error answers throw {@link ByrdApiError}.
 *
 * ```ts
 * const byrd = new ByrdClient({ apiKey: process.env.BYRD_API_KEY!, baseUrl: 'https://gateway.example.com' });
 * const order = await byrd.orders.create({ amount: '25.00', currency: 'EUR', orderRef: 'cart-42' });
 * ```
 */
export class ByrdClient {
  /** Orders, the basis of the hosted payment form. */
  readonly orders: Orders;
  /** Card, token, Multibanco and MB WAY payments; capture, refund and release. */
  readonly payments: Payments;
  /** Transaction queries. */
  readonly transactions: Transactions;
  /** The card vault. */
  readonly tokens: Tokens;
  /** Webhook settings, history, attempts and resending. */
  readonly webhooks: Webhooks;
  /** Origins of your sites for the hosted form. */
  readonly checkoutOrigins: CheckoutOrigins;
  /** Sandbox simulations (sandbox keys only). */
  readonly sandbox: Sandbox;

  constructor(options: ByrdClientOptions) {
    const http = new HttpTransport(options);
    this.orders = new Orders(http);
    this.payments = new Payments(http);
    this.transactions = new Transactions(http);
    this.tokens = new Tokens(http);
    this.webhooks = new Webhooks(http);
    this.checkoutOrigins = new CheckoutOrigins(http);
    this.sandbox = new Sandbox(http);
  }
}
