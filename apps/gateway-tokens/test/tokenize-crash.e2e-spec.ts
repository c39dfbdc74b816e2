import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '@byrd/payments';
import { runMigrations } from '@byrd/platform';
import {
  callService,
  freePort,
  futureExpiry,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from '../src/database.js';
import { completeChallenge, vaultKeys } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKENS_MAIN = path.resolve(here, '../dist/main.js');
const PAYMENTS_MAIN = path.resolve(here, '../../payments/dist/main.js');
const CHALLENGE = '5555341244441115';

/**
 * kill -9 of the vault between writing a tokenization's verification ahead and hearing back from
 * payments: payments is paused (SIGSTOP) while the vault asks it to start the verification, the
 * vault is killed there, then payments resumes and the vault restarts on the same database. No
 * token may be charged unverified, a token already verified must stay chargeable, and the
 * merchant's retry must answer the same token with a 3DS page that works.
 */
describe('tokenization survives kill -9 of the vault while it asks payments', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let tokensVars: Record<string, string>;
  let tokens: ServiceProcess;
  let payments: ServiceProcess;
  let tokensDb: DataSource;

  beforeAll(async () => {
    for (const main of [TOKENS_MAIN, PAYMENTS_MAIN]) {
      if (!existsSync(main)) throw new Error(`${main} is missing: run "npx turbo run build" first`);
    }
    env = await TestEnvironment.create();
    const paymentsPort = await freePort();
    const paymentsVars = await env.serviceEnv('payments', {
      HTTP_PORT: String(paymentsPort),
      LOG_LEVEL: 'warn',
      PUBLIC_BASE_URL: `http://127.0.0.1:${paymentsPort}`,
    });
    tokensVars = await env.serviceEnv('gateway-tokens', {
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      ...vaultKeys(),
    });
    await runMigrations({
      url: paymentsVars.DATABASE_URL,
      entities: PAYMENTS_ENTITIES,
      migrations: PAYMENTS_MIGRATIONS,
    });
    await runMigrations({
      url: tokensVars.DATABASE_URL,
      entities: TOKENS_ENTITIES,
      migrations: TOKENS_MIGRATIONS,
    });
    [payments, tokens] = await Promise.all([
      startServiceProcess(PAYMENTS_MAIN, paymentsVars),
      startServiceProcess(TOKENS_MAIN, tokensVars),
    ]);
    tokensDb = await new DataSource({ type: 'postgres', url: tokensVars.DATABASE_URL }).initialize();
    merchant = await env.createMerchant('Crash Shop');
  });

  afterAll(async () => {
    payments?.child.kill('SIGCONT');
    payments?.child.kill('SIGKILL');
    tokens?.child.kill('SIGKILL');
    await tokensDb?.destroy();
    await env?.cleanup();
  });

  const call = (base: string, method: string, pathname: string, body?: unknown) =>
    callService(base, merchant.apiKey, method, pathname, body);
  const tokenize = (reference: string) =>
    call(tokens.url, 'POST', '/api/v2/tokens', {
      CustomReference: reference,
      RedirectUrl: 'https://shop.example.com/cards',
      Card: { number: CHALLENGE, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
    });
  const chargeWithoutShopper = (tokenId: string) =>
    call(payments.url, 'POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      tokenId,
      transactionMode: 'merchantInitiatedRecurring',
    });
  const tokenOf = async (reference: string) =>
    (
      await tokensDb.query<
        { id: string; verification_id: string | null; staged_verification_id: string | null }[]
      >(`SELECT id, verification_id, staged_verification_id FROM card_tokens WHERE custom_reference = $1`, [
        reference,
      ])
    )[0];

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>) {
    const deadline = Date.now() + 4_000; // within the vault's 5 s RPC timeout
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Tokenizes the card of `reference` and kills the vault once its verification is written ahead:
   * on a new token, or beside a known one (its card staged).
   */
  async function killWhileAsking(reference: string): Promise<void> {
    const before = await tokenOf(reference);
    payments.child.kill('SIGSTOP');
    const asking = tokenize(reference).catch(() => null); // its connection dies with the vault
    await waitFor('the verification written ahead', async () => {
      const token = await tokenOf(reference);
      if (!before) return token?.verification_id;
      return token?.staged_verification_id && token.staged_verification_id !== before.staged_verification_id;
    });
    tokens.child.kill('SIGKILL');
    await tokens.exited();
    await asking;
    payments.child.kill('SIGCONT');
    tokens = await startServiceProcess(TOKENS_MAIN, tokensVars);
  }

  it('leaves a new card unchargeable, and the retry answers the same token with a working 3DS page', async () => {
    const reference = `crash-${randomUUID()}`;
    await killWhileAsking(reference);
    const left = await tokenOf(reference);
    expect(left.verification_id).not.toBeNull();
    expect((await chargeWithoutShopper(left.id)).body).toMatchObject({ code: 'BYRD205' });

    const retry = await tokenize(reference);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ tokenId: left.id, code: 'BYRD207' });
    await completeChallenge(retry.body.action.url, '1234');
    expect((await chargeWithoutShopper(left.id)).body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  });

  it('keeps a verified card chargeable when a later tokenization of it dies while asking', async () => {
    const reference = `crash-${randomUUID()}`;
    const first = await tokenize(reference);
    expect(first.body.code).toBe('BYRD207');
    await completeChallenge(first.body.action.url, '1234');
    expect((await chargeWithoutShopper(first.body.tokenId)).body.status).toBe('Success');

    const verified = await tokenOf(reference);
    await killWhileAsking(reference);
    // The dead request's card waits staged on a verification nobody will pass: the token keeps its
    // card and the verification its shopper passed.
    const left = await tokenOf(reference);
    expect(left).toMatchObject({ id: first.body.tokenId, verification_id: verified.verification_id });
    expect(left.staged_verification_id).not.toBeNull();
    expect((await chargeWithoutShopper(first.body.tokenId)).body).toMatchObject({
      code: 'BYRD200',
      status: 'Success',
    });
  });
});
