import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { AppModule as OrdersAppModule, ordersConfigSchema, type OrdersConfig } from '@byrd/orders';
import { loadConfig, Rpc } from '@byrd/platform';
import {
  callService,
  futureExpiry,
  startTestApp,
  TestEnvironment,
  type TestMerchant,
} from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { paymentsConfigSchema, type PaymentsConfig } from '../src/config.js';
import { migratedServiceEnv } from './migrated-env.js';

export interface HarnessOptions {
  /**
   * Make PUBLIC_BASE_URL the payments server itself, so the URLs it hands out (`action.url`, the 3DS
   * pages) work in a browser. Off by default: the other suites expect the unreachable placeholder.
   */
  publicBaseIsSelf?: boolean;
}

/**
 * Payments and orders running side by side on this run's own databases, stream and key bucket,
 * reached over real HTTP, as a merchant's backend (or a shopper's browser) would reach them.
 */
export class PaymentsHarness {
  private constructor(
    readonly env: TestEnvironment,
    readonly payments: NestFastifyApplication,
    public orders: NestFastifyApplication,
    readonly paymentsUrl: string,
    public ordersUrl: string,
    readonly merchant: TestMerchant,
    private readonly ordersConfig: OrdersConfig,
    private readonly paymentsConfig: PaymentsConfig,
  ) {}

  /** Replicas started by `startReplica`, closed by `stop`. */
  private readonly replicas: NestFastifyApplication[] = [];

  static async start(
    extraEnv: Record<string, string> = {},
    options: HarnessOptions = {},
  ): Promise<PaymentsHarness> {
    const env = await TestEnvironment.create();
    // Both databases at once (copies of migrated templates: waits on PostgreSQL, not on this process).
    const [ordersVars, paymentsVars] = await Promise.all([
      migratedServiceEnv(env, 'orders'),
      migratedServiceEnv(env, 'payments', extraEnv),
    ]);
    const ordersConfig = loadConfig(ordersConfigSchema, ordersVars);
    const orders = await startTestApp(OrdersAppModule.forRoot(ordersConfig), 'orders');

    const paymentsConfig = loadConfig(paymentsConfigSchema, {
      ...paymentsVars,
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
      // Every test request comes from one address: a suite about the checkout-key limits sets its own.
      RATE_LIMIT_PAYMENTS_MAX: '10000',
      RATE_LIMIT_ORDER_PAYMENTS_MAX: '10000',
      ...extraEnv,
    });
    const payments = await startTestApp(AppModule.forRoot(paymentsConfig), SERVICE_NAME);
    // The port is known only once listening; the services read PUBLIC_BASE_URL from this object per use.
    if (options.publicBaseIsSelf) paymentsConfig.PUBLIC_BASE_URL = payments.url;
    const merchant = await env.createMerchant('Acme Shop');
    return new PaymentsHarness(
      env,
      payments.app,
      orders.app,
      payments.url,
      orders.url,
      merchant,
      ordersConfig,
      paymentsConfig,
    );
  }

  /** Another payments replica on the same database, broker and buckets; returns its URL. */
  async startReplica(): Promise<string> {
    const replica = await startTestApp(AppModule.forRoot(this.paymentsConfig), SERVICE_NAME);
    this.replicas.push(replica.app);
    return replica.url;
  }

  async stop(): Promise<void> {
    for (const replica of this.replicas) await replica.close();
    await this.payments.close();
    await this.orders.close();
    await this.env.cleanup();
  }

  /**
   * Orders stops answering one RPC subject (as when the broker goes away between two calls of one
   * payment) until `restartOrders`.
   */
  async ordersStopAnswering(subject: string): Promise<void> {
    // The subscriptions are private to Rpc: reaching in keeps this test-only ability out of it.
    const { subscriptions } = this.orders.get<
      unknown,
      { subscriptions: { getSubject(): string; drain(): Promise<void> }[] }
    >(Rpc);
    const subscription = subscriptions.find((s) => s.getSubject().endsWith(subject));
    if (!subscription) throw new Error(`orders does not serve ${subject}`);
    await subscription.drain();
  }

  /** Orders again, a new instance on the same database (a restarted process would be just this). */
  async restartOrders(): Promise<void> {
    await this.orders.close();
    const orders = await startTestApp(OrdersAppModule.forRoot(this.ordersConfig), 'orders');
    this.orders = orders.app;
    this.ordersUrl = orders.url;
  }

  call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return callService(base, this.merchant.apiKey, method, path, body, headers);
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.call(this.paymentsUrl, method, path, body, headers);
  }

  createOrder(overrides: Record<string, unknown> = {}) {
    return this.call(this.ordersUrl, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
      orderRef: `ref-${randomUUID().slice(0, 8)}`,
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
      ...overrides,
    });
  }

  getOrder(orderId: string) {
    return this.call(this.ordersUrl, 'GET', `/api/v2/orders/${orderId}`);
  }

  /**
   * The platform RPC client of another service, signing as it with this run's keys: what the hosted
   * form's backend (`hosted-form-bff`) uses to call `rpc.payments.*`.
   */
  /**
   * What a process killed after its commit leaves: the change made, but no stored answer for the
   * request's idempotency-key (`scope`: the merchant, or `checkoutScopeOf(checkoutKey)` for a browser: `loseCheckoutAnswer`).
   */
  async loseAnswer(key: string, scope = this.merchant.merchantId): Promise<void> {
    await this.payments
      .get(DataSource)
      .query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, [scope, key]);
  }

  /**
   * The same for a browser's request (`?checkoutKey=`), whatever form its scope takes in
   * `idempotency_keys` (tests send fresh keys, so the key alone names it). Fails when no answer was
   * stored: a retry would then prove nothing.
   */
  async loseCheckoutAnswer(key: string): Promise<void> {
    // A DELETE answers [rows, affected] through TypeORM.
    const [, lost] = await this.payments
      .get(DataSource)
      .query<[unknown[], number]>(
        `DELETE FROM idempotency_keys WHERE merchant_id LIKE 'checkout:%' AND key = $1`,
        [key],
      );
    if (lost !== 1) throw new Error(`No stored answer of a checkout request under ${key}`);
  }

  rpcAs(service: string): Rpc {
    return new Rpc(this.env.nats, service, this.env.rpcIdentity(service));
  }

  /** A card payment as a merchant backend sends it. */
  pay(card: string, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    return this.request(
      'POST',
      '/api/v2/payment',
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderRef: `pay-${randomUUID().slice(0, 8)}`,
        redirectUrl: 'https://shop.example.com/return',
        card: { number: card, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
        ...overrides,
      },
      headers,
    );
  }

  /** Polls the order until `predicate` holds (orders follows payments through events). */
  async waitForOrder(orderId: string, predicate: (order: any) => boolean, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.getOrder(orderId);
      if (predicate(body)) return body;
      if (Date.now() > deadline) throw new Error(`Order never matched; last seen: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A multibanco or mbway payment as a merchant backend sends it (mbway with a Portuguese mobile). */
  payAsync(
    type: 'multibanco' | 'mbway',
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    return this.request(
      'POST',
      '/api/v2/payment',
      {
        type,
        amount: '25.00',
        currency: 'EUR',
        orderRef: `${type}-${randomUUID().slice(0, 8)}`,
        redirectUrl: 'https://shop.example.com/return',
        ...(type === 'mbway' ? { mbway: { phoneNumber: '912345678' } } : {}),
        ...overrides,
      },
      headers,
    );
  }

  /** Acts as the shopper of a pending async payment: `pay`, `refuse` or `expire`. */
  simulate(transactionId: string, action: string, headers: Record<string, string> = {}) {
    return this.request('POST', `/api/v2/sandbox/payments/${transactionId}/${action}`, undefined, headers);
  }

  /** Opens a chargeback through the sandbox, as a card scheme would. */
  openChargeback(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    return this.request('POST', '/api/v2/sandbox/chargebacks', body, headers);
  }

  /** Moves a chargeback: `disputing`, `pendingaction`, `won`, `lost` or `closed`. */
  moveChargeback(chargebackId: string, action: string, headers: Record<string, string> = {}) {
    return this.request('POST', `/api/v2/sandbox/chargebacks/${chargebackId}/${action}`, undefined, headers);
  }
}
