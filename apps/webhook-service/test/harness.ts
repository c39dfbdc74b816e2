import { randomBytes, randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { createEnvelope, type EventEnvelope, type EventName, type PaymentMethod } from '@byrd/contracts';
import { loadConfig } from '@byrd/platform';
import { callService, startTestApp, TestEnvironment, type TestMerchant } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { webhookConfigSchema, type WebhookConfig } from '../src/config.js';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from '../src/database.js';

/** Fast time units for tests, and receivers on 127.0.0.1 allowed explicitly (nothing else private). */
export const TEST_WEBHOOK_ENV: Record<string, string> = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  // One key for the whole run: every process of a test opens what another sealed.
  WEBHOOK_SECRETS_KEYS: randomBytes(32).toString('base64'),
  WEBHOOK_RETRY_UNIT_MS: '10',
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_LEASE_MS: '2000',
  // Half a retry minute, as by default (30 s to 1 minute): a lone failing webhook keeps its schedule.
  WEBHOOK_BREAKER_COOLDOWN_MS: '5',
};

/** Builds an event as its producer would and publishes it on the run's stream. */
export async function publishEvent(
  env: TestEnvironment,
  merchantId: string,
  type: EventName,
  paymentMethod: PaymentMethod | null = 'card',
  overrides: Record<string, unknown> = {},
): Promise<EventEnvelope> {
  const family = type.split('.')[0];
  const orderId = randomUUID();
  const transactionId = randomUUID();
  const data =
    family === 'order'
      ? {
          orderId,
          orderRef: 'ref-1',
          status: 'paid',
          paymentId: transactionId,
          transactionId,
          amount: '25.00',
          currency: 'EUR',
        }
      : family === 'transaction'
        ? {
            transactionId,
            orderId,
            orderRef: 'ref-1',
            status: 'Success',
            operationType: 'Payment',
            amount: '25.00',
            currency: 'EUR',
            code: 'BYRD200',
            description: 'Operation successfully completed',
            isoAmount: 2500,
            initiatedFrom: 'Server',
          }
        : {
            chargebackId: randomUUID(),
            transactionId,
            orderId,
            status: 'Created',
            amount: '25.00',
            currency: 'EUR',
            reason: 'fraud',
          };
  const envelope = createEnvelope(type, {
    merchantId,
    paymentMethod,
    data: { ...data, ...overrides } as never,
  });
  await env.publish(envelope);
  return envelope;
}

/** The webhook service in this process on its own database and stream, reached over real HTTP. */
export class WebhookHarness {
  private constructor(
    readonly env: TestEnvironment,
    public app: NestFastifyApplication,
    public baseUrl: string,
    public merchant: TestMerchant,
    readonly db: pg.Client,
    /** The service's environment: its DATABASE_URL is the run's database. */
    public vars: Record<string, string>,
  ) {}

  get config(): WebhookConfig {
    return loadConfig(webhookConfigSchema, this.vars);
  }

  /** Switches to a new merchant of the run (so a test sees only its own settings and webhooks). */
  async freshMerchant(mode: 'sandbox' | 'live' = 'sandbox'): Promise<TestMerchant> {
    this.merchant = await this.env.createMerchant(`Shop ${randomUUID().slice(0, 6)}`, mode);
    return this.merchant;
  }

  static async start(extraEnv: Record<string, string> = {}): Promise<WebhookHarness> {
    const env = await TestEnvironment.create();
    // Its database comes migrated (a copy of a template migrated once, not every file again).
    const vars = await env.serviceEnv(
      SERVICE_NAME,
      { ...TEST_WEBHOOK_ENV, ...extraEnv },
      { entities: WEBHOOK_ENTITIES, migrations: WEBHOOK_MIGRATIONS },
    );
    const config = loadConfig(webhookConfigSchema, vars);
    const { app, url } = await startTestApp(AppModule.forRoot(config), SERVICE_NAME);
    const merchant = await env.createMerchant('Acme Shop');
    const db = new pg.Client({ connectionString: config.DATABASE_URL });
    await db.connect();
    return new WebhookHarness(env, app, url, merchant, db, vars);
  }

  /** Stops the service and starts it again on the same database and stream, with `env` changed. */
  async restart(env: Record<string, string>): Promise<void> {
    await this.app.close();
    this.vars = { ...this.vars, ...env };
    const { app, url } = await startTestApp(AppModule.forRoot(this.config), SERVICE_NAME);
    this.app = app;
    this.baseUrl = url;
  }

  async stop(): Promise<void> {
    await this.app.close();
    await this.db.end();
    await this.env.cleanup();
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return callService(this.baseUrl, this.merchant.apiKey, method, path, body, headers);
  }

  /** Creates a setting and returns its record (with the signing secret). */
  async subscribe(body: Record<string, unknown>, apiKey = this.merchant.apiKey) {
    const answer = await callService(this.baseUrl, apiKey, 'POST', '/api/v1/settings', {
      credentialType: 'api-key',
      ...body,
    });
    if (answer.status !== 201) throw new Error(`subscribe: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.data;
  }

  publish(
    type: EventName,
    paymentMethod: PaymentMethod | null = 'card',
    overrides: Record<string, unknown> = {},
  ) {
    return publishEvent(this.env, this.merchant.merchantId, type, paymentMethod, overrides);
  }

  /** Rows of a SQL query on the service's database. */
  async rows<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.db.query(sql, params)).rows as T[];
  }

  /** Polls until the query returns a row matching `predicate`. */
  async waitForRow<T = any>(
    sql: string,
    params: unknown[],
    predicate: (rows: T[]) => boolean,
    timeoutMs = 15_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.rows<T>(sql, params);
      if (predicate(rows)) return rows;
      if (Date.now() > deadline) throw new Error(`Never matched: ${sql}; last: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The webhooks of one event, by setting. */
  webhooksOf(eventId: string) {
    return this.rows(`SELECT * FROM webhooks WHERE event_id = $1 ORDER BY created_at`, [eventId]);
  }
}
