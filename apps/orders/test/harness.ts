import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { EventEnvelope, EventName, TransactionEventContent } from '@byrd/contracts';
import { loadConfig, runMigrations } from '@byrd/platform';
import { callService, startTestApp, TestEnvironment, type TestMerchant } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { ordersConfigSchema } from '../src/config.js';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '../src/database.js';

/** A running orders service on its own database, stream and key bucket, reached over real HTTP. */
export class OrdersHarness {
  private constructor(
    readonly env: TestEnvironment,
    readonly app: NestFastifyApplication,
    readonly baseUrl: string,
    readonly merchant: TestMerchant,
    private readonly vars: Record<string, string>,
  ) {}

  /** What the operator CLI (`npm run cli`) needs to reach this run's NATS buckets. */
  cliEnv(): Record<string, string> {
    const { NATS_URL, NATS_SUBJECT_PREFIX, EVENTS_STREAM, API_KEYS_BUCKET, MERCHANTS_BUCKET } = this.vars;
    return { NATS_URL, NATS_SUBJECT_PREFIX, EVENTS_STREAM, API_KEYS_BUCKET, MERCHANTS_BUCKET };
  }

  static async start(extraEnv: Record<string, string> = {}): Promise<OrdersHarness> {
    const env = await TestEnvironment.create();
    const vars = await env.serviceEnv(SERVICE_NAME, extraEnv);
    const config = loadConfig(ordersConfigSchema, vars);
    await runMigrations({
      url: config.DATABASE_URL,
      entities: ORDERS_ENTITIES,
      migrations: ORDERS_MIGRATIONS,
    });
    const { app, url } = await startTestApp(AppModule.forRoot(config), SERVICE_NAME);
    const merchant = await env.createMerchant('Acme Shop');
    return new OrdersHarness(env, app, url, merchant, vars);
  }

  async stop(): Promise<void> {
    await this.app.close();
    await this.env.cleanup();
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return callService(this.baseUrl, this.merchant.apiKey, method, path, body, headers);
  }

  async createOrder(overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    return this.request(
      'POST',
      '/api/v2/orders',
      {
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
      },
      headers,
    );
  }

  /** Publishes a transaction.* event as the payments service would. */
  async publishTransaction(
    type: EventName,
    order: { orderId: string; orderRef: string },
    fields: Partial<TransactionEventContent> & { transactionId: string },
  ): Promise<EventEnvelope> {
    const data: TransactionEventContent = {
      orderId: order.orderId,
      orderRef: order.orderRef,
      status: 'Success',
      operationType: 'Payment',
      amount: '25.00',
      currency: 'EUR',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      ...fields,
    };
    const envelope = {
      id: randomUUID(),
      type,
      occurredAt: new Date().toISOString(),
      merchantId: this.merchant.merchantId,
      paymentMethod: 'card',
      referenceIds: [order.orderId, fields.transactionId],
      data,
    } as EventEnvelope;
    await this.env.publish(envelope);
    return envelope;
  }

  /** Polls the order until `predicate` holds (the state machine is driven asynchronously by events). */
  async waitForOrder(
    orderId: string,
    predicate: (order: Record<string, any>) => boolean,
    timeoutMs = 10_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.request('GET', `/api/v2/orders/${orderId}`);
      if (predicate(body)) return body;
      if (Date.now() > deadline) throw new Error(`Order never matched; last seen: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
