import { callService, PrivateNatsServer, type ServiceProcess } from '@byrd/platform/testing';
import { OrdersProcessWorld } from './process-world.js';

const GRACE_MS = 6_000;

interface Readiness {
  status: number;
  body: { status?: string; nats?: string; database?: string };
}

/**
 * The broker restarting under a running service: it stays in the Service (ready, `degraded`) for
 * READINESS_NATS_GRACE_MS, serving what needs no broker, and leaves it only past that; every order
 * it confirmed meanwhile is announced once the broker is back.
 */
describe('orders while NATS is away', () => {
  let broker: PrivateNatsServer;
  let world: OrdersProcessWorld;
  let service: ServiceProcess;
  let brokerStopped = false;

  beforeAll(async () => {
    broker = await PrivateNatsServer.start();
    world = await OrdersProcessWorld.create(
      { LOG_LEVEL: 'fatal', READINESS_NATS_GRACE_MS: String(GRACE_MS) },
      broker.url,
    );
    service = await world.start();
  });
  afterAll(async () => {
    if (brokerStopped) await broker.start(); // the run's stream and buckets are removed through it
    await world?.stop();
    await broker?.remove();
  });

  async function readiness(): Promise<Readiness> {
    const answer = await fetch(`${service.url}/health/ready`);
    return { status: answer.status, body: (await answer.json()) as Readiness['body'] };
  }

  async function until(
    what: string,
    condition: (r: Readiness) => boolean,
    limitMs: number,
  ): Promise<Readiness> {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const current = await readiness();
      if (condition(current)) return current;
      if (Date.now() > deadline)
        throw new Error(
          `${what} not within ${limitMs} ms: ${JSON.stringify(current)}\n${service.output().slice(-3000)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * The test's own connection reconnects on its own schedule, not the service's: a JetStream request
   * it sends before then can time out (seen once in a full run), so it is asked again.
   */
  async function collectOnceReconnected() {
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        return await world.env.collect('order.created');
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  const createOrder = () =>
    callService(service.url, world.merchant.apiKey, 'POST', '/api/v2/orders', {
      amount: '12.00',
      currency: 'EUR',
    });

  it('stays ready and takes orders within the grace, leaves after it, and announces them when NATS is back', async () => {
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ok', database: 'up', nats: 'up' } });

    brokerStopped = true;
    await broker.stop();
    const stoppedAt = Date.now();
    const degraded = await until('degraded', (r) => r.body.nats === 'down', 5_000);
    expect(degraded).toEqual({ status: 200, body: { status: 'degraded', database: 'up', nats: 'down' } });
    const created = await createOrder();
    expect(created.status).toBe(201);

    const gone = await until('unavailable', (r) => r.status === 503, GRACE_MS + 5_000);
    expect(gone.body).toEqual({ status: 'unavailable', database: 'up', nats: 'down' });
    // Not before the grace, counted from the first check that found the broker away.
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(GRACE_MS);

    await broker.start();
    brokerStopped = false;
    await until('ready again', (r) => r.status === 200 && r.body.status === 'ok', 15_000);
    const events = await collectOnceReconnected();
    await events.waitFor((e) => (e.data as { orderId?: string }).orderId === created.body.orderId, 20_000);
  }, 60_000);
});
