import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { runMigrations } from '@byrd/platform';
import {
  callService,
  freePort,
  futureExpiry,
  killBeforeAnswerStored,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from '../src/database.js';
import { vaultKeys } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(here, '../dist/main.js');
const LEASE_MS = 1_500;

/**
 * kill -9 of the vault while a token's DELETE holds its idempotency-key, at the last step before its
 * answer is stored under the key: the merchant's retry with that key must answer as the first would
 * have (204, the card erased), never 404 for a token its own request deleted.
 */
describe('a token delete killed before its answer was stored', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let vars: Record<string, string>;
  let service: ServiceProcess;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npx turbo run build" first`);
    env = await TestEnvironment.create();
    vars = await env.serviceEnv('gateway-tokens', {
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'fatal',
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      ...vaultKeys(),
    });
    await runMigrations({ url: vars.DATABASE_URL, entities: TOKENS_ENTITIES, migrations: TOKENS_MIGRATIONS });
    service = await startServiceProcess(MAIN, vars);
    merchant = await env.createMerchant('Delete Crash Shop');
  });

  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  const call = (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) =>
    callService(service.url, merchant.apiKey, method, pathname, body, headers);

  it('answers the retry 204, as the first request would have', async () => {
    // With its 3DS data: stored at once, no verification through payments.
    const created = await call('POST', '/api/v2/tokens', {
      Type: 'Card',
      CustomReference: `customer-${randomUUID().slice(0, 8)}`,
      RedirectUrl: 'https://shop.example.com/cards',
      Card: {
        number: '4242424242424242',
        expiration: futureExpiry(),
        cvv: '123',
        holder: 'Ana Silva',
        aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
        eci: '05',
        dsTransactionId: randomUUID(),
      },
    });
    expect(created.status).toBe(201);
    const { tokenId } = created.body;
    const key = { 'idempotency-key': `delete-crash-${randomUUID()}` };
    const remove = () => call('DELETE', `/api/v2/tokens/${tokenId}`, undefined, key);

    await killBeforeAnswerStored({
      databaseUrl: vars.DATABASE_URL,
      service,
      row: { table: 'card_tokens', id: tokenId },
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
    expect(answer.status).toBe(204);
    expect((await call('GET', `/api/v2/tokens/${tokenId}`)).status).toBe(404);
    // The key now holds that answer.
    const replay = await remove();
    expect(replay.status).toBe(204);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  }, 60_000);
});
