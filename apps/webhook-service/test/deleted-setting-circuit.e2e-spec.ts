import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { callService, startTestApp } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A replica keeps each endpoint's circuit in memory, and an open one until an answer closes it. A
 * setting deleted while its circuit is open gets no more answers: the circuit must go with it, on
 * the replica that deleted it and on the others, else each replica holds one per churned setting
 * until it restarts.
 */
describe("an endpoint's circuit when its setting is deleted", () => {
  let h: WebhookHarness;
  let receiver: Receiver;
  let apiOnly: { app: NestFastifyApplication; url: string };

  beforeAll(async () => {
    h = await WebhookHarness.start({ WEBHOOK_BREAKER_FAILURES: '2' });
    receiver = await Receiver.start();
    receiver.answer = (r) => (r.path.includes('?down') ? { status: 500 } : { status: 200 });
    // A replica that takes API calls and delivers nothing: what it deletes, the delivering replica
    // only learns from the database.
    apiOnly = await startTestApp(
      AppModule.forRoot({ ...h.config, WEBHOOK_DELIVERY_ENABLED: false }),
      SERVICE_NAME,
    );
  });
  afterAll(async () => {
    await apiOnly?.app.close();
    await receiver?.stop();
    await h?.stop();
  });

  const openCircuits = async () =>
    Number(
      /^webhook_endpoint_circuits_open (\d+)/m.exec(
        await (await fetch(`${h.baseUrl}/metrics`)).text(),
      )?.[1] ?? 0,
    );

  async function waitForOpenCircuits(n: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await openCircuits()) !== n) {
      if (Date.now() > deadline) throw new Error(`open circuits: ${await openCircuits()}, expected ${n}`);
      await sleep(20);
    }
  }

  /** A setting whose receiver fails every attempt, until the delivering replica opened its circuit. */
  async function failingSetting(name: string, open: number) {
    const setting = await h.subscribe({ url: `${receiver.url}?down-${name}` });
    for (let i = 0; i < 3; i++) await h.publish('order.paid');
    await waitForOpenCircuits(open);
    return setting;
  }

  it('drops it on the replica that deletes the setting, at once', async () => {
    await h.freshMerchant();
    const setting = await failingSetting('here', 1);
    expect((await h.request('DELETE', `/api/v1/settings/${setting.id}`)).status).toBe(200);
    expect(await openCircuits()).toBe(0);
    // And it does not come back (a delivery of it in flight at the delete judges nothing).
    await sleep(500);
    expect(await openCircuits()).toBe(0);
  });

  it('drops it on another replica at its next discovery, finding the setting deleted; a live one stays', async () => {
    await h.freshMerchant();
    const live = await failingSetting('live', 1);
    const deleted = await failingSetting('elsewhere', 2);
    const answer = await callService(
      apiOnly.url,
      h.merchant.apiKey,
      'DELETE',
      `/api/v1/settings/${deleted.id}`,
    );
    expect(answer.status).toBe(200);
    await waitForOpenCircuits(1, 5_000);
    await sleep(500);
    expect(await openCircuits()).toBe(1);
    // The live setting's circuit is the one kept: its receiver is tried again and, answering, closes it.
    receiver.answer = () => ({ status: 200 });
    await waitForOpenCircuits(0);
    expect((await h.request('DELETE', `/api/v1/settings/${live.id}`)).status).toBe(200);
  });
});
