// What the tokens benchmark measures, started: the vault (gateway-tokens) with fresh keys and the
// bare handler, behind one edge process; and its requests: a new card stored per request.
import { randomBytes } from 'node:crypto';
import type { TestMerchant } from '@byrd/platform/testing';
import { BARE_PREFIX, migrateBare, startBareHandler } from '../core/bare-handler.js';
import type { RunContext } from '../core/guarded-run.js';
import {
  freePort,
  migrate,
  startEdge,
  startService,
  writeRoutesFile,
  type Listening,
} from '../core/stack.js';
import { futureExpiry, note, step } from '../core/util.js';

export const CARD = '4242424242424242';

export interface TokensStack {
  merchant: TestMerchant;
  db: { tokens: string; bare: string };
  vault: Listening;
  bare: Listening;
  edge: Listening;
}

export async function startTokensStack({ env, group, logDir }: RunContext): Promise<TokensStack> {
  const db = { tokens: await env.database('gateway-tokens'), bare: await env.database('bare') };
  await migrate(group, 'gateway-tokens', db.tokens);
  await migrateBare(group, db.bare);
  const merchant = await env.createMerchant('Bench Merchant');

  step('Starting the vault, the bare handler and the edge');
  const vault = await startService(
    group,
    'gateway-tokens',
    await env.serviceEnv('gateway-tokens', await freePort(), {
      VAULT_KEKS: `bench:${randomBytes(32).toString('base64')}`,
      VAULT_FINGERPRINT_KEY: randomBytes(32).toString('base64'),
    }),
  );
  const bare = await startBareHandler(group, db.bare, merchant);
  const routes = writeRoutesFile(logDir, { 'gateway-tokens': vault.port }, [
    { prefix: BARE_PREFIX, service: 'bench-bare', port: bare.port },
  ]);
  const edge = await startEdge(group, routes);
  note(`edge ${edge.url} -> gateway-tokens :${vault.port}, bare :${bare.port} (${BARE_PREFIX})`);
  return { merchant, db, vault, bare, edge };
}

/**
 * POST /api/v2/tokens: a VISA card with the merchant's 3DS data (no verification round trip to
 * payments) and a new CustomReference per request, so every request stores a new card.
 */
export const tokenBody = () =>
  JSON.stringify({
    Type: 'Card',
    CustomReference: 'bench-[<id>]',
    Alias: 'Bench card',
    Card: {
      number: CARD,
      expiration: futureExpiry(),
      cvv: '123',
      holder: 'Ana Silva',
      aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
      eci: '05',
    },
  });

/** The payments benchmark's body for the bare handler (it writes a payment, whatever it is sent). */
export const bareBody = () =>
  JSON.stringify({ type: 'card', amount: '25.00', currency: 'EUR', card: { number: '5448280000000007' } });
