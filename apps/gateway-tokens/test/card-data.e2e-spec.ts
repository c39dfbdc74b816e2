import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from '@byrd/payments';
import { runMigrations } from '@byrd/platform';
import {
  callService,
  cardDataLeaks,
  dumpDatabases,
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
const FRICTIONLESS = '5448280000000007';
const AMEX = '378282246310005';
const INVALID = '4242424242424241';
const CVVS = ['987', '6543'];
/** Numbers of brands the card checks accept that validator.js's isCreditCard did not know. */
const OTHER_BRANDS = [
  '5018001111111115', // Maestro
  '6304001111111116', // Maestro
  '501800111111', // Maestro, 12 digits
  '6363681111111113', // Elo
  '5067171111111116', // Elo
  '6062821111111119', // Hipercard
  '6212345678901234567', // UnionPay, 19 digits
];

/**
 * PCI DSS requirement 3 for the vault, checked as an auditor would: after a full run of tokens and
 * token payments, with trace logging on, no card number and no CVV is in any database, log or event.
 */
describe('card data around the vault', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let tokens: ServiceProcess;
  let payments: ServiceProcess;
  const databases: string[] = [];

  beforeAll(async () => {
    for (const main of [TOKENS_MAIN, PAYMENTS_MAIN]) {
      if (!existsSync(main)) throw new Error(`${main} is missing: run "npx turbo run build" first`);
    }
    env = await TestEnvironment.create();
    const paymentsPort = await freePort();
    const paymentsVars = await env.serviceEnv('payments', {
      HTTP_PORT: String(paymentsPort),
      LOG_LEVEL: 'trace',
      PUBLIC_BASE_URL: `http://127.0.0.1:${paymentsPort}`,
    });
    const tokensVars = await env.serviceEnv('gateway-tokens', {
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'trace',
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
    databases.push(paymentsVars.DATABASE_URL, tokensVars.DATABASE_URL);
    payments = await startServiceProcess(PAYMENTS_MAIN, paymentsVars);
    tokens = await startServiceProcess(TOKENS_MAIN, tokensVars);
    merchant = await env.createMerchant();
    // Two service processes started one after the other: each may take 20 s or more on a loaded CI
    // machine (startServiceProcess waits up to 45 s), so together past the 60 s default.
  }, 120_000);
  afterAll(async () => {
    tokens?.child.kill('SIGKILL');
    payments?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  const call = (base: string, method: string, pathname: string, body?: unknown) =>
    callService(base, merchant.apiKey, method, pathname, body);
  const tokenize = (number: string, cvv = CVVS[0], extra: object = {}) =>
    call(tokens.url, 'POST', '/api/v2/tokens', {
      CustomReference: 'customer-1',
      RedirectUrl: 'https://shop.example.com/cards',
      Card: { number, expiration: futureExpiry(), cvv, holder: 'Ana Silva', ...extra },
    });
  const pay = (tokenId: string, transactionMode: string) =>
    call(payments.url, 'POST', '/api/v2/payment', {
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      tokenId,
      transactionMode,
    });

  it('keeps no card number or CVV in the databases, logs or events after a full run', async () => {
    const challenged = await tokenize(CHALLENGE);
    expect(challenged.body.code).toBe('BYRD207');
    await completeChallenge(challenged.body.action.url);
    expect((await pay(challenged.body.tokenId, 'merchantInitiatedRecurring')).body.status).toBe('Success');
    const cit = await pay(challenged.body.tokenId, 'cardHolderInitiatedUnescheduled');
    await completeChallenge(cit.body.action.url);

    const frictionless = await tokenize(FRICTIONLESS, CVVS[0], {
      aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
      eci: '02',
    });
    expect((await pay(frictionless.body.tokenId, 'cardHolderInitiatedUnescheduled')).body.status).toBe(
      'Success',
    );
    const amex = await tokenize(AMEX, CVVS[1]);
    expect(amex.status).toBe(201);
    expect(
      (await call(tokens.url, 'GET', '/api/v2/tokens?customReference=customer-1')).body.data,
    ).toHaveLength(3);
    expect((await call(tokens.url, 'DELETE', `/api/v2/tokens/${amex.body.tokenId}`)).status).toBe(204);
    // Refused requests are logged too: their card data must be redacted as well.
    expect((await tokenize(INVALID)).status).toBe(400);
    await new Promise((r) => setTimeout(r, 500)); // let the outbox drain

    const collector = await env.collect('>');
    await collector.waitFor(() => false, 1_000).catch(() => undefined);
    const events = collector.events.map((event) => JSON.stringify(event.envelope));
    expect(events.length).toBeGreaterThan(2);

    const places = {
      database: dumpDatabases(databases),
      logs: tokens.output() + payments.output(),
      events: events.join('\n'),
    };
    expect(places.logs.length).toBeGreaterThan(1_000); // trace logging really ran
    expect(cardDataLeaks(places, [CHALLENGE, FRICTIONLESS, AMEX, INVALID], CVVS)).toEqual([]);
    // What is kept is the masked form (and, in the vault, ciphertext).
    expect(places.database).toContain('555534******1115');
  });

  it.each(OTHER_BRANDS)(
    'refuses %s as an alias, in a holder name, a reference or a return address (400 BYRD900), and stores nothing',
    async (number) => {
      const cases: Array<[string, object]> = [
        ['Alias', { Alias: number }],
        [
          'Card.holder',
          {
            Card: { number: FRICTIONLESS, expiration: futureExpiry(), cvv: CVVS[0], holder: `Ana ${number}` },
          },
        ],
        ['CustomReference', { CustomReference: `customer ${number}` }],
        ['RedirectUrl', { RedirectUrl: `https://shop.example.com/ret?c=${number}` }],
      ];
      for (const [field, fields] of cases) {
        const answer = await call(tokens.url, 'POST', '/api/v2/tokens', {
          CustomReference: 'customer-2',
          RedirectUrl: 'https://shop.example.com/cards',
          Card: { number: FRICTIONLESS, expiration: futureExpiry(), cvv: CVVS[0] },
          ...fields,
        });
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('BYRD900');
        expect(answer.body.errors).toEqual([{ field, message: expect.stringContaining('card number') }]);
        expect(JSON.stringify(answer.body)).not.toContain(number);
      }
      const vault = dumpDatabases([databases[1]]);
      expect(vault).toContain('customer-1'); // the dump holds the tokens
      expect(cardDataLeaks({ vault }, [number], [])).toEqual([]);
    },
  );

  it('logs no card number typed into a path or a query, only its censored form', async () => {
    const before = tokens.output().length;
    const [visa, hipercard] = ['4111111111111111', '6062821111111119'];
    expect((await call(tokens.url, 'GET', `/api/v2/tokens?customReference=${visa}`)).status).toBe(200);
    expect((await call(tokens.url, 'GET', `/api/v2/tokens?customReference=${hipercard}`)).status).toBe(200);
    expect((await call(tokens.url, 'GET', `/api/v2/tokens/${visa}`)).status).toBe(400);
    expect((await call(tokens.url, 'GET', `/api/v2/tokens/${hipercard}`)).status).toBe(400);
    expect((await call(tokens.url, 'DELETE', '/api/v2/tokens/4111%201111%201111%201111')).status).toBe(400);
    await new Promise((r) => setTimeout(r, 200)); // let the lines reach the output
    const logs = tokens.output().slice(before);
    expect(cardDataLeaks({ logs }, [visa, hipercard, '4111%201111'], [])).toEqual([]);
    // The requests are still logged, the card number censored.
    expect(logs).toContain('"url":"/api/v2/tokens?customReference=[REDACTED]"');
    expect(logs).toContain('"url":"/api/v2/tokens/[REDACTED]"');
  });
});
