import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
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
import { loadConfig, Rpc, runMigrations } from '@byrd/platform';
import {
  callService,
  futureExpiry,
  startTestApp,
  TestEnvironment,
  type TestMerchant,
} from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { tokensConfigSchema, type TokensConfig } from '../src/config.js';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from '../src/database.js';
import { newKekEntry } from '../src/vault/key-ring.js';

/** The development-style vault keys of a test run. */
export function vaultKeys(keks = [newKekEntry('k1')]): Record<string, string> {
  return {
    VAULT_KEKS: keks.join(','),
    VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 7).toString('base64'),
  };
}

/**
 * The vault and payments side by side on this run's own databases, stream and key bucket, reached
 * over real HTTP as a merchant's backend (and a shopper's browser) reach them.
 */
export class TokensHarness {
  private constructor(
    readonly env: TestEnvironment,
    public tokens: NestFastifyApplication,
    readonly payments: NestFastifyApplication,
    public tokensUrl: string,
    readonly paymentsUrl: string,
    readonly merchant: TestMerchant,
    public tokensConfig: TokensConfig,
    /** Started on request (`withOrders`): the hosted form's orders, for "save my card". */
    readonly orders: { app: NestFastifyApplication; url: string } | null = null,
  ) {}

  static async start(
    tokensEnv: Record<string, string> = vaultKeys(),
    options: { withOrders?: boolean; paymentsEnv?: Record<string, string> } = {},
  ): Promise<TokensHarness> {
    const env = await TestEnvironment.create();
    let orders: { app: NestFastifyApplication; url: string } | null = null;
    if (options.withOrders) {
      const ordersConfig = loadConfig(ordersConfigSchema, await env.serviceEnv('orders'));
      await runMigrations({
        url: ordersConfig.DATABASE_URL,
        entities: ORDERS_ENTITIES,
        migrations: ORDERS_MIGRATIONS,
      });
      orders = await startTestApp(OrdersAppModule.forRoot(ordersConfig), 'orders');
    }
    const paymentsConfig = loadConfig(
      paymentsConfigSchema,
      await env.serviceEnv('payments', options.paymentsEnv),
    );
    await runMigrations({
      url: paymentsConfig.DATABASE_URL,
      entities: PAYMENTS_ENTITIES,
      migrations: PAYMENTS_MIGRATIONS,
    });
    const payments = await startTestApp(PaymentsAppModule.forRoot(paymentsConfig), 'payments');
    // The 3DS pages it hands out must work in a browser: they are served by this payments server.
    paymentsConfig.PUBLIC_BASE_URL = payments.url;

    const tokensConfig = loadConfig(tokensConfigSchema, await env.serviceEnv(SERVICE_NAME, tokensEnv));
    await runMigrations({
      url: tokensConfig.DATABASE_URL,
      entities: TOKENS_ENTITIES,
      migrations: TOKENS_MIGRATIONS,
    });
    const tokens = await startTestApp(AppModule.forRoot(tokensConfig), SERVICE_NAME);
    const merchant = await env.createMerchant('Acme Shop');
    return new TokensHarness(
      env,
      tokens.app,
      payments.app,
      tokens.url,
      payments.url,
      merchant,
      tokensConfig,
      orders,
    );
  }

  /** False after a restart the vault refused: it is stopped until the next restart. */
  private tokensRunning = true;

  /** Stops the vault (as when its replicas are away) until the next restart. */
  async stopTokens(): Promise<void> {
    if (this.tokensRunning) await this.tokens.close();
    this.tokensRunning = false;
  }

  /**
   * Restarts the vault on the same database with other variables (e.g. a new KEK list). Rejects
   * with the vault's error when it refuses to start; it then stays stopped.
   */
  async restartTokens(tokensEnv: Record<string, string>): Promise<void> {
    if (this.tokensRunning) await this.tokens.close();
    this.tokensRunning = false;
    this.tokensConfig = loadConfig(tokensConfigSchema, {
      ...(await this.env.serviceEnv(SERVICE_NAME, tokensEnv)),
      DATABASE_URL: this.tokensConfig.DATABASE_URL,
    });
    const started = await startTestApp(AppModule.forRoot(this.tokensConfig), SERVICE_NAME);
    this.tokens = started.app;
    this.tokensUrl = started.url;
    this.tokensRunning = true;
  }

  async stop(): Promise<void> {
    if (this.tokensRunning) await this.tokens.close();
    await this.payments.close();
    await this.orders?.app.close();
    await this.env.cleanup();
  }

  call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return callService(base, this.merchant.apiKey, method, path, body, headers);
  }

  /** `POST /api/v2/orders` as a merchant backend sends it (needs `withOrders`). */
  createOrder(overrides: Record<string, unknown> = {}) {
    return this.call(this.orders!.url, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
      orderRef: `ref-${randomUUID().slice(0, 8)}`,
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
      ...overrides,
    });
  }

  getOrder(orderId: string) {
    return this.call(this.orders!.url, 'GET', `/api/v2/orders/${orderId}`);
  }

  /** The platform RPC client of another service, signing as it with this run's keys. */
  rpcAs(service: string): Rpc {
    return new Rpc(this.env.nats, service, this.env.rpcIdentity(service));
  }

  /** `POST /api/v2/tokens` with the published PascalCase body. */
  createToken(
    card: Record<string, unknown>,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    return this.call(
      this.tokensUrl,
      'POST',
      '/api/v2/tokens',
      {
        Type: 'Card',
        CustomReference: `customer-${randomUUID().slice(0, 8)}`,
        Alias: 'My card',
        RedirectUrl: 'https://shop.example.com/cards',
        Card: { expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva', ...card },
        ...overrides,
      },
      headers,
    );
  }

  tokenRequest(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.call(this.tokensUrl, method, path, body, headers);
  }

  /** A token payment as a merchant backend sends it. */
  payWithToken(
    tokenId: string,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    return this.call(
      this.paymentsUrl,
      'POST',
      '/api/v2/payment',
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        redirectUrl: 'https://shop.example.com/return',
        tokenId,
        transactionMode: 'merchantInitiatedUnescheduled',
        ...overrides,
      },
      headers,
    );
  }
}

/**
 * The shopper's side of a 3DS challenge, as the hosted `action.url` page drives it: preAuth, auth,
 * the issuer's challenge page and the code typed into it. Then the redirect back to the shop.
 */
export async function completeChallenge(
  actionUrl: string,
  otp = '1234',
  seen: { challengePage?: string } = {},
): Promise<string | null> {
  const { origin, pathname } = new URL(actionUrl);
  const id = pathname.split('/').pop()!;
  const api = (path: string, body: unknown) =>
    fetch(`${origin}/3ds/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => {
      const json = (await r.json()) as any;
      // 2xx answers are `{ data }`, as the public 3DS SDK reads them.
      return { status: r.status, body: r.ok ? json.data : json };
    });
  const form = (url: string, fields: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    }).then((r) => r.text());

  await api(`/v2/${id}/preAuth`, { browser: { userAgent: 'test', language: 'en-US' } });
  const auth = await api(`/v1/${id}/auth`, { threeDSCompInd: 'Y' });
  if (auth.body.challengeUrl) {
    const creq = Buffer.from(
      JSON.stringify({
        threeDSServerTransID: id,
        acsTransID: auth.body.challengeId,
        messageVersion: auth.body.challengeVersion,
        messageType: 'CReq',
        challengeWindowSize: '05',
      }),
    ).toString('base64url');
    const page = await form(auth.body.challengeUrl, { creq });
    seen.challengePage = page;
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (!action) throw new Error(`No challenge form in: ${page.slice(0, 500)}`);
    await form(action, { threeDSServerTransID: id, otp, action: 'submit' });
  }
  const landing = await fetch(actionUrl, { redirect: 'manual' });
  return landing.headers.get('location');
}
