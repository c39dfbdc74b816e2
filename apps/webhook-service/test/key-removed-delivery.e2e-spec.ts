import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '@byrd/platform';
import { startTestApp } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { webhookConfigSchema } from '../src/config.js';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const newKey = () => randomBytes(32).toString('base64');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A setting sealed with a key an operator then removed from WEBHOOK_SECRETS_KEYS (before re-sealing):
 * its webhooks cannot be signed, so they are not sent. That is our fault, not the receiver's: they
 * must wait, their attempts untouched and its circuit closed, and go out once the key is back.
 */
describe('webhooks of a setting whose key was removed from WEBHOOK_SECRETS_KEYS', () => {
  const oldKey = newKey();
  const otherKey = newKey();
  const withoutOld = otherKey;
  const withOld = `${otherKey},${oldKey}`;
  let h: WebhookHarness;
  let receiver: Receiver;
  const replicas: NestFastifyApplication[] = [];

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_SECRETS_KEYS: oldKey,
      // Few failures open a circuit, and the sweep of held webhooks runs all the time: neither may
      // take the webhooks that wait for the key.
      WEBHOOK_BREAKER_FAILURES: '3',
      WEBHOOK_RETENTION_SWEEP_MS: '100',
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    for (const app of replicas) await app.close();
    await receiver?.stop();
    await h?.stop();
  });

  /** Another replica on the same database and stream, holding `keys`. */
  async function replica(keys: string): Promise<{ app: NestFastifyApplication; url: string }> {
    const config = loadConfig(webhookConfigSchema, { ...h.vars, WEBHOOK_SECRETS_KEYS: keys });
    const started = await startTestApp(AppModule.forRoot(config), SERVICE_NAME);
    replicas.push(started.app);
    return started;
  }

  const metric = async (baseUrl: string, name: string) =>
    Number(
      new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(`${baseUrl}/metrics`)).text())?.[1] ?? 0,
    );
  const unsent = (baseUrl: string) => metric(baseUrl, 'webhook_attempts_unsent_total\\{reason="secrets"\\}');
  const circuitsOpened = (baseUrl: string) =>
    metric(baseUrl, 'webhook_endpoint_circuit_changes_total\\{to="open"\\}');

  const webhooksOf = (settingsId: string) =>
    h.rows<{ id: string; status: string; attempt_count: number; attempts: number }>(
      `SELECT w.id, w.status, w.attempt_count,
              (SELECT count(*)::int FROM webhook_attempts a WHERE a.webhook_id = w.id) AS attempts
         FROM webhooks w WHERE w.settings_id = $1 ORDER BY w.created_at`,
      [settingsId],
    );

  /** Waits until every webhook of the setting is delivered, then checks each went out once, signed. */
  async function expectDeliveredOnce(settingsId: string, signingSecret: string, count: number) {
    const rows = await h.waitForRow(
      `SELECT id FROM webhooks WHERE settings_id = $1 AND status = 'succeeded'`,
      [settingsId],
      (r) => r.length === count,
      30_000,
    );
    expect(rows).toHaveLength(count);
    await sleep(300); // nothing more arrives
    for (const row of await webhooksOf(settingsId)) {
      // The full budget: the first attempt of the schedule, the only one recorded.
      expect(row).toMatchObject({ status: 'succeeded', attempt_count: 1, attempts: 1 });
      const got = receiver.of(row.id);
      expect(got).toHaveLength(1);
      expect(new Webhook(signingSecret).verify(got[0].body, got[0].headers as never)).toBeTruthy();
    }
    const [attempt] = await h.rows(
      `SELECT a.number, a.status_code, a.error FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
        WHERE w.settings_id = $1 LIMIT 1`,
      [settingsId],
    );
    expect(attempt).toEqual({ number: 1, status_code: 200, error: null });
  }

  it('wait, unsent and untried, while no replica holds the key, and go out with their whole budget once it is back', async () => {
    await h.freshMerchant();
    const sealedByOld = await h.subscribe({ url: `${receiver.url}?sealed-by-old` });
    // The key is removed (without re-sealing): the setting's secrets open with no listed key.
    await h.restart({ WEBHOOK_SECRETS_KEYS: withoutOld });
    const sealedByNew = await h.subscribe({ url: `${receiver.url}?sealed-by-new` });
    expect((await h.request('GET', `/api/v1/settings/${sealedByOld.id}`)).body.data.credential).toMatchObject(
      {
        unavailable: expect.any(String),
      },
    );

    const unsentBefore = await unsent(h.baseUrl);
    const EVENTS = 5;
    for (let i = 0; i < EVENTS; i++) await h.publish('order.paid');
    // The other setting of the merchant is not held up.
    await h.waitForRow(
      `SELECT id FROM webhooks WHERE settings_id = $1 AND status = 'succeeded'`,
      [sealedByNew.id],
      (r) => r.length === EVENTS,
    );
    // Longer than a receiver failing every attempt would take to open the circuit and spend many
    // of each webhook's attempts, with the held-webhooks sweep running meanwhile.
    await sleep(2_000);

    const waiting = await webhooksOf(sealedByOld.id);
    expect(waiting).toHaveLength(EVENTS);
    for (const row of waiting)
      expect(row).toMatchObject({ status: 'pending', attempt_count: 0, attempts: 0 });
    expect(receiver.received.filter((r) => r.path.endsWith('?sealed-by-old'))).toEqual([]);
    // Not a receiver failure: no circuit opened, no failing streak for the held-webhooks sweep.
    expect(await circuitsOpened(h.baseUrl)).toBe(0);
    expect(await metric(h.baseUrl, 'webhook_endpoint_circuits_open')).toBe(0);
    const [setting] = await h.rows(`SELECT failing_since FROM webhook_settings WHERE id = $1`, [
      sealedByOld.id,
    ]);
    expect(setting.failing_since).toBeNull();
    // Still loud: each try that found the key missing is counted.
    expect(await unsent(h.baseUrl)).toBeGreaterThan(unsentBefore);

    // The key is back (anywhere in the list): every waiting webhook goes out once, at its first attempt.
    await h.restart({ WEBHOOK_SECRETS_KEYS: withOld });
    await expectDeliveredOnce(sealedByOld.id, sealedByOld.signingSecret, EVENTS);
    expect(await circuitsOpened(h.baseUrl)).toBe(0);
  }, 60_000);

  it('on two replicas, one without the key: the one holding it delivers every webhook once', async () => {
    await h.restart({ WEBHOOK_SECRETS_KEYS: oldKey });
    await h.freshMerchant();
    const setting = await h.subscribe({ url: `${receiver.url}?two-replicas` });
    // This replica lost the key; a second replica, started alongside, lacks it too.
    await h.restart({ WEBHOOK_SECRETS_KEYS: withoutOld });
    const second = await replica(withoutOld);

    const EVENTS = 20;
    for (let i = 0; i < EVENTS; i++) await h.publish('order.paid');
    await h.waitForRow(
      `SELECT id FROM webhooks WHERE settings_id = $1`,
      [setting.id],
      (r) => r.length === EVENTS,
    );
    await sleep(1_500);
    for (const row of await webhooksOf(setting.id))
      expect(row).toMatchObject({ status: 'pending', attempt_count: 0, attempts: 0 });
    expect(await unsent(h.baseUrl)).toBeGreaterThan(0);
    expect(await unsent(second.url)).toBeGreaterThan(0);

    // The second replica is rolled out with the key back; the first still lacks it and keeps
    // claiming and letting go of the setting's webhooks meanwhile.
    await second.app.close();
    replicas.splice(replicas.indexOf(second.app), 1);
    const restored = await replica(withOld);
    await expectDeliveredOnce(setting.id, setting.signingSecret, EVENTS);
    // Round after round of events at once, while the replica without the key keeps claiming some
    // and letting them go beside the one that sends them: each goes out once, at its first attempt.
    const lettingGo = await unsent(h.baseUrl);
    for (let round = 1; round <= 5; round++) {
      await Promise.all(Array.from({ length: EVENTS }, () => h.publish('order.paid')));
      await expectDeliveredOnce(setting.id, setting.signingSecret, EVENTS * (round + 1));
    }
    expect(await unsent(h.baseUrl)).toBeGreaterThan(lettingGo);
    for (const url of [h.baseUrl, restored.url]) {
      expect(await circuitsOpened(url)).toBe(0);
      expect(await metric(url, 'webhook_endpoint_circuits_open')).toBe(0);
    }
  }, 60_000);
});
