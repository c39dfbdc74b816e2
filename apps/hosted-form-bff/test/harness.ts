import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CHECKOUT_KEY_HEADER } from '@byrd/contracts';
import {
  AppModule as TokensAppModule,
  newKekEntry,
  TOKENS_ENTITIES,
  TOKENS_MIGRATIONS,
  tokensConfigSchema,
} from '@byrd/gateway-tokens';
import {
  AppModule as OrdersAppModule,
  ORDERS_ENTITIES,
  ORDERS_MIGRATIONS,
  ordersConfigSchema,
} from '@byrd/orders';
import {
  AppModule as PaymentsAppModule,
  PAYMENTS_ENTITIES,
  PAYMENTS_MIGRATIONS,
  paymentsConfigSchema,
} from '@byrd/payments';
import { loadConfig, setLogDestination } from '@byrd/platform';
import {
  callHttp,
  callService,
  startTestApp,
  TestEnvironment,
  type HttpAnswer,
  type TestMerchant,
} from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { checkoutConfigSchema, type CheckoutConfig } from '../src/config.js';

export type { HttpAnswer };

export interface CheckoutHarnessOptions {
  /**
   * Extra variables of the BFF, e.g. `{ RATE_LIMIT_MAX: '3' }` (they win over the harness's own;
   * the harness lifts both rate limits to 10000, as every test request comes from one address).
   */
  bffEnv?: Record<string, string>;
  /** Extra variables of orders (e.g. `ORDER_EXPIRY_UNIT_MS`). */
  ordersEnv?: Record<string, string>;
  /** Extra variables of payments (e.g. `THREE_DS_TIMEOUT_MS`). */
  paymentsEnv?: Record<string, string>;
  /**
   * The built page the BFF serves (HOSTED_FORM_WEB_DIR); default the package's dist/web, which
   * must have been built (`npm run build -w @byrd/hosted-form-bff`), else start() says so.
   */
  webDir?: string;
  /**
   * Level of every service's log, captured for `logs()`; default `trace` (everything). The first
   * harness of a test file sets it for the whole file (one logger per process).
   */
  logLevel?: string;
}

/**
 * nestjs-pino builds one logger per process (the first app's level and destination; later apps
 * log through it too), so every harness of a test file writes through this one sink, into the lines
 * of the harness running now.
 */
let capturing: string[] | null = null;
const LOG_SINK = { write: (line: string) => void capturing?.push(line) };

/** The asset of {@link standInWebDir}, as Vite names its hashed output. */
export const STAND_IN_ASSET = 'assets/index-AbC123xy.js';

/**
 * A minimal built page (index.html and one hashed asset) in a temporary directory, for tests of the
 * API and of the serving that must not depend on the real page being built.
 */
export function standInWebDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'checkout-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html><html lang="en"><head><script type="module" src="/checkout/${STAND_IN_ASSET}"></script></head><body><div id="app"></div></body></html>`,
  );
  writeFileSync(path.join(dir, STAND_IN_ASSET), 'document.getElementById("app").textContent = "stand-in";\n');
  return dir;
}

/** The merchant's order response (`orderId`, `checkoutKey`, `checkoutUrl`, `status`, ...). */
export type CreatedOrder = { orderId: string; checkoutKey: string; [field: string]: any };

/** What a test reads of the BFF's config (e.g. to know the rate limits it runs with). */
export type { CheckoutConfig };

/**
 * The hosted form end to end, on one TestEnvironment (this run's own databases, stream, key
 * buckets and RPC identities): orders, payments (PUBLIC_BASE_URL = its own address, so its 3DS
 * pages and SDK work in a browser), the card vault and the BFF, all in this process on loopback
 * ports and reached over real HTTP. One sandbox merchant ("Acme Shop") creates the orders.
 *
 * - `checkoutUrl`: the page, `{bffUrl}/checkout/` (append `#/payment?checkoutKey=&orderId=&configs=`);
 *   orders' `checkoutUrl` in order responses points at it too.
 * - `createOrder(overrides)`: POST /api/v2/orders as the merchant (25.00 EUR by default) → its body.
 * - `getOrder`, `waitForOrderStatus`: the merchant's GET /api/v2/orders/{id} (the order's status
 *   follows its payments through events, asynchronously).
 * - `api(method, path, body, checkoutKey)`: a call to the BFF, path from its root
 *   (`/checkout/api/v2/orders/{id}`), with the key in `x-checkout-key` when given.
 * - `simulateAsyncPayment(transactionId, 'pay' | ...)`: the sandbox shopper of a Multibanco/MB WAY payment.
 * - `transactionsOf(orderId)`: the order's payments as payments keeps them.
 * - `logs()`: every line the four services logged since start (JSON, for a card-data scan).
 * - `holdOrderUpdates()`: orders applies no transaction event until `release()` (a consumer backlog).
 * - `stopOrders()`: takes orders away (last in a suite: nothing else works without it).
 * - `stop()`: closes everything and drops this run's databases and streams.
 */
export class CheckoutHarness {
  private constructor(
    readonly env: TestEnvironment,
    private readonly apps: NestFastifyApplication[],
    readonly bffUrl: string,
    readonly ordersUrl: string,
    readonly paymentsUrl: string,
    readonly tokensUrl: string,
    readonly merchant: TestMerchant,
    readonly bffConfig: CheckoutConfig,
    private readonly logLines: string[],
    private readonly ordersApp: NestFastifyApplication,
    private readonly ordersDatabaseUrl: string,
  ) {}

  /** The page's address: `{bffUrl}/checkout/`. */
  get checkoutUrl(): string {
    return `${this.bffUrl}/checkout/`;
  }

  static async start(options: CheckoutHarnessOptions = {}): Promise<CheckoutHarness> {
    const logLines: string[] = [];
    capturing = logLines;
    setLogDestination(LOG_SINK);
    const env = await TestEnvironment.create();
    const apps: NestFastifyApplication[] = [];
    try {
      const logLevel = options.logLevel ?? 'trace';

      // Each database comes migrated: a copy of a template migrated once for these migrations.
      const paymentsConfig = loadConfig(
        paymentsConfigSchema,
        await env.serviceEnv(
          'payments',
          { LOG_LEVEL: logLevel, ...options.paymentsEnv },
          { entities: PAYMENTS_ENTITIES, migrations: PAYMENTS_MIGRATIONS },
        ),
      );
      const payments = await startTestApp(PaymentsAppModule.forRoot(paymentsConfig), 'payments');
      apps.push(payments.app);
      // Known once listening; payments reads PUBLIC_BASE_URL from this object on each use.
      paymentsConfig.PUBLIC_BASE_URL = payments.url;

      const tokensConfig = loadConfig(
        tokensConfigSchema,
        await env.serviceEnv(
          'gateway-tokens',
          {
            LOG_LEVEL: logLevel,
            VAULT_KEKS: newKekEntry('k1'),
            VAULT_FINGERPRINT_KEY: randomBytes(32).toString('base64'),
          },
          { entities: TOKENS_ENTITIES, migrations: TOKENS_MIGRATIONS },
        ),
      );
      const tokens = await startTestApp(TokensAppModule.forRoot(tokensConfig), 'gateway-tokens');
      apps.push(tokens.app);

      const ordersVars = await env.serviceEnv(
        'orders',
        { LOG_LEVEL: logLevel, ...options.ordersEnv },
        { entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS },
      );
      const ordersConfig = loadConfig(ordersConfigSchema, ordersVars);
      const orders = await startTestApp(OrdersAppModule.forRoot(ordersConfig), 'orders');
      apps.push(orders.app);

      // The BFF keeps no data: the run's common variables and its own RPC identity, no database.
      const { DATABASE_URL: _none, ...common } = ordersVars;
      const bffConfig = loadConfig(checkoutConfigSchema, {
        ...common,
        RPC_SIGNING_KEY: env.rpcKeyPair(SERVICE_NAME).privateKey,
        LOG_LEVEL: logLevel,
        THREE_DS_SDK_URL: `${payments.url}/3ds/sdk.js`,
        ...(options.webDir ? { HOSTED_FORM_WEB_DIR: options.webDir } : {}),
        // Every test request comes from 127.0.0.1: a suite must not trip the limits by accident.
        RATE_LIMIT_MAX: '10000',
        RATE_LIMIT_PAYMENTS_MAX: '10000',
        RATE_LIMIT_ORDER_PAYMENTS_MAX: '10000',
        ...options.bffEnv,
      });
      const bff = await startTestApp(AppModule.forRoot(bffConfig), SERVICE_NAME, bffConfig.TRUSTED_PROXIES);
      apps.push(bff.app);
      // Order responses' checkoutUrl: the page this BFF serves (orders reads it on each use).
      ordersConfig.CHECKOUT_URL = `${bff.url}/checkout`;

      const merchant = await env.createMerchant('Acme Shop');
      return new CheckoutHarness(
        env,
        apps,
        bff.url,
        orders.url,
        payments.url,
        tokens.url,
        merchant,
        bffConfig,
        logLines,
        orders.app,
        ordersConfig.DATABASE_URL,
      );
    } catch (error) {
      for (const app of apps.reverse()) await app.close().catch(() => undefined);
      await env.cleanup().catch(() => undefined);
      throw error;
    }
  }

  async stop(): Promise<void> {
    // The BFF first (it calls the others), then orders, the vault and payments.
    for (const app of [...this.apps].reverse()) await app.close();
    await this.env.cleanup();
    if (capturing === this.logLines) capturing = null;
  }

  /** Stops the orders service for good (its RPC subjects then have no responder). */
  async stopOrders(): Promise<void> {
    this.apps.splice(this.apps.indexOf(this.ordersApp), 1);
    await this.ordersApp.close();
  }

  /**
   * Holds back every change orders would make from transaction events (a lock on the table of an
   * order's transactions; reads go on), as a backlog of its event consumer would, until `release()`.
   */
  async holdOrderUpdates(): Promise<{ release: () => Promise<void> }> {
    const holder = new pg.Client({ connectionString: this.ordersDatabaseUrl });
    await holder.connect();
    await holder.query('BEGIN; LOCK TABLE order_transactions IN EXCLUSIVE MODE');
    return { release: () => holder.query('ROLLBACK').then(() => holder.end()) };
  }

  /** Another replica of the BFF with the same configuration (closed by stop); returns its address. */
  async startBffReplica(): Promise<string> {
    const replica = await startTestApp(
      AppModule.forRoot(this.bffConfig),
      SERVICE_NAME,
      this.bffConfig.TRUSTED_PROXIES,
    );
    this.apps.push(replica.app);
    return replica.url;
  }

  /** Everything the services logged since start, one JSON object a line. */
  logs(): string {
    return this.logLines.join('');
  }

  /** A call as the merchant's backend makes it (`x-api-key`), to any of the services. */
  merchantCall(
    base: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    return callService(base, this.merchant.apiKey, method, path, body, headers);
  }

  /** `POST /api/v2/orders` as the merchant (25.00 EUR, a shopper, a redirectUrl); throws unless 201. */
  async createOrder(overrides: Record<string, unknown> = {}): Promise<CreatedOrder> {
    const answer = await this.merchantCall(this.ordersUrl, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
      orderRef: `ref-${randomUUID().slice(0, 8)}`,
      shopper: {
        firstName: 'Ana',
        lastName: 'Silva',
        email: 'ana@example.com',
        phoneNumber: '+351910000000',
      },
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
      ...overrides,
    });
    if (answer.status !== 201) {
      throw new Error(`Creating the order answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }

  /** The merchant's `GET /api/v2/orders/{orderId}` body; throws unless 200. */
  async getOrder(orderId: string): Promise<Record<string, any>> {
    const answer = await this.merchantCall(this.ordersUrl, 'GET', `/api/v2/orders/${orderId}`);
    if (answer.status !== 200) {
      throw new Error(`Reading order ${orderId} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }

  /** Polls the merchant's GET until the order has `status`; throws with the last one seen. */
  async waitForOrderStatus(
    orderId: string,
    status: string,
    timeoutMs = 15_000,
  ): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const order = await this.getOrder(orderId);
      if (order.status === status) return order;
      if (Date.now() > deadline) {
        throw new Error(`Order ${orderId} never became ${status}; last seen ${String(order.status)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * A call to the BFF as the page makes it: `path` from the BFF's root (e.g.
   * `/checkout/api/v2/orders/{orderId}`), JSON body, the checkout key in `x-checkout-key`.
   */
  api(
    method: string,
    path: string,
    body?: unknown,
    checkoutKey?: string,
    headers: Record<string, string> = {},
  ): Promise<HttpAnswer> {
    return callHttp(this.bffUrl, method, path, body, {
      ...(checkoutKey !== undefined ? { [CHECKOUT_KEY_HEADER]: checkoutKey } : {}),
      ...headers,
    });
  }

  /**
   * The sandbox shopper of a pending Multibanco / MB WAY payment: `pay` settles it, `refuse` (MB
   * WAY) and `expire` end it (payments' `POST /api/v2/sandbox/payments/{id}/{action}`).
   */
  simulateAsyncPayment(transactionId: string, action: string): Promise<HttpAnswer> {
    return this.merchantCall(this.paymentsUrl, 'POST', `/api/v2/sandbox/payments/${transactionId}/${action}`);
  }

  /** Every payment of the order as payments keeps it (the merchant's `GET /api/v2/transactions`), newest first. */
  async transactionsOf(orderId: string): Promise<Record<string, any>[]> {
    const answer = await this.merchantCall(
      this.paymentsUrl,
      'GET',
      `/api/v2/transactions?orderId=${orderId}`,
    );
    if (answer.status !== 200) throw new Error(`transactions of ${orderId}: HTTP ${answer.status}`);
    return answer.body.data;
  }
}
