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
  private readonly replicas: NestFastifyApplication[] = [];

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

  /** Another orders replica on the same database, stream and buckets: its consumers share the durables. */
  async startReplica(): Promise<NestFastifyApplication> {
    const config = loadConfig(ordersConfigSchema, this.vars);
    const { app } = await startTestApp(AppModule.forRoot(config), SERVICE_NAME);
    this.replicas.push(app);
    return app;
  }

  async stop(): Promise<void> {
    for (const replica of this.replicas) await replica.close();
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
    const envelope = this.transactionEvent(type, order, fields);
    await this.env.publish(envelope);
    return envelope;
  }

  /** A transaction.* event as payments publishes it: a successful 25.00 EUR payment unless `fields` say otherwise. */
  transactionEvent(
    type: EventName,
    order: { orderId: string; orderRef: string },
    fields: Partial<TransactionEventContent> & { transactionId: string },
  ): EventEnvelope {
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
    return {
      id: randomUUID(),
      type,
      occurredAt: new Date().toISOString(),
      merchantId: this.merchant.merchantId,
      paymentMethod: 'card',
      referenceIds: [order.orderId, fields.transactionId],
      data,
    } as EventEnvelope;
  }

  /**
   * Publishes `envelope` again as the stream delivers a message it got twice: under the same id,
   * past the broker's duplicate window (no msgID), so only the consumer's inbox can tell.
   */
  async redeliver(envelope: EventEnvelope): Promise<void> {
    await this.env.nats.js.publish(this.env.nats.subject(envelope.type), JSON.stringify(envelope));
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
