import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { runMigrations } from '@byrd/platform';
import {
  callService,
  freePort,
  killBeforeAnswerStored,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from '../src/database.js';
import { TEST_WEBHOOK_ENV } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(here, '../dist/main.js');
const LEASE_MS = 1_500;

/**
 * kill -9 of the service while a DELETE of a webhook setting holds its idempotency-key, at the last
 * step before its answer is stored under the key: the merchant's retry with that key must answer as
 * the first would have (the setting deleted), never 404 for a setting its own request deleted.
 */
describe('a webhook setting delete killed before its answer was stored', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let vars: Record<string, string>;
  let service: ServiceProcess;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npx turbo run build" first`);
    env = await TestEnvironment.create();
    vars = await env.serviceEnv('webhook-service', {
      ...TEST_WEBHOOK_ENV,
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'fatal',
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
    });
    await runMigrations({
      url: vars.DATABASE_URL,
      entities: WEBHOOK_ENTITIES,
      migrations: WEBHOOK_MIGRATIONS,
    });
    service = await startServiceProcess(MAIN, vars);
    merchant = await env.createMerchant('Delete Crash Shop');
  });

  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  const call = (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) =>
    callService(service.url, merchant.apiKey, method, pathname, body, headers);

  it('answers the retry with the setting deleted, as the first request would have', async () => {
    const created = await call('POST', '/api/v1/settings', {
      url: 'http://127.0.0.1:9/hooks',
      credentialType: 'api-key',
      events: ['order.paid'],
    });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    const key = { 'idempotency-key': `delete-crash-${randomUUID()}` };
    const remove = () => call('DELETE', `/api/v1/settings/${id}`, undefined, key);

    await killBeforeAnswerStored({
      databaseUrl: vars.DATABASE_URL,
      service,
      row: { table: 'webhook_settings', id },
      idempotencyKey: key['idempotency-key'],
      send: remove,
    });

    service = await startServiceProcess(MAIN, vars);
    const started = Date.now();
    let answer = await remove();
    while (answer.status === 409 && Date.now() - started < LEASE_MS + 5_000) {
      await new Promise((r) => setTimeout(r, 200));
      answer = await remove();
    }
    expect(answer).toMatchObject({ status: 200, body: { data: { id, deleted: true } } });
    expect((await call('GET', `/api/v1/settings/${id}`)).status).toBe(404);
    // The key now holds that answer.
    const replay = await remove();
    expect(replay).toMatchObject({ status: 200, body: { data: { id, deleted: true } } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  }, 60_000);
});
