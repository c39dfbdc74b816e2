import { randomUUID } from 'node:crypto';
import { EventConsumers, loadConfig, NatsContext, Outbox } from '@byrd/platform';
import { MediumDatabase, TEST_NATS_URL } from '@byrd/platform/testing';
import { ordersConfigSchema, type OrdersConfig } from '../src/config.js';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '../src/database.js';
import { OrderEventRecorder } from '../src/orders/order-events.js';

/**
 * Orders' medium tier: a fresh migrated orders database (MediumDatabase), the config, and the order
 * events recorder use cases take, on an outbox whose relay is off, so events stay as rows to read.
 */
export class OrdersMedium {
  readonly events: OrderEventRecorder;

  private constructor(
    readonly db: MediumDatabase,
    readonly config: OrdersConfig,
    private readonly nats: NatsContext,
  ) {
    const outbox = new Outbox(db.dataSource, nats, config, new EventConsumers(db.dataSource, nats, config));
    this.events = new OrderEventRecorder(outbox);
  }

  static async start(): Promise<OrdersMedium> {
    const db = await MediumDatabase.create({
      service: 'orders',
      entities: ORDERS_ENTITIES,
      migrations: ORDERS_MIGRATIONS,
    });
    const config = loadConfig(ordersConfigSchema, {
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      OUTBOX_RELAY_ENABLED: 'false',
    });
    const nats = await NatsContext.open(
      { url: TEST_NATS_URL, name: 'orders-medium' },
      `medium${randomUUID()}.`,
    );
    return new OrdersMedium(db, config, nats);
  }

  async close(): Promise<void> {
    await this.nats.close();
    await this.db.close();
  }
}
