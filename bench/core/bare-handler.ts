// The bare baseline (bench/core/bare-payments-server.ts: Fastify + pg doing a payment's writes) as
// the payments and tokens benchmarks start it, on the payments tables of its own database.
import { createHash } from 'node:crypto';
import type { TestMerchant } from '@byrd/platform/testing';
import type { ProcessGroup } from './processes.js';
import { migrate, startHelper, type Listening } from './stack.js';

/** Where the edge routes the bare handler (next to the real routes, so both share the edge). */
export const BARE_PREFIX = '/bench-bare/api/v2/payment';

/** As the platform's hashApiKey: SHA-256 of the trimmed, lower-cased key. */
const hashKey = (apiKey: string) => createHash('sha256').update(apiKey.trim().toLowerCase()).digest('hex');

/** The bare handler's tables: the payments migrations, run against its own database. */
export const migrateBare = (group: ProcessGroup, databaseUrl: string) =>
  migrate(group, 'payments', databaseUrl, 'bare-migrate');

/** Starts the bare handler on `databaseUrl` (migrated) for `merchant`. */
export async function startBareHandler(
  group: ProcessGroup,
  databaseUrl: string,
  merchant: TestMerchant,
  env: Record<string, string> = {},
): Promise<Listening> {
  return startHelper(
    group,
    'bare',
    'core/bare-payments-server.js',
    {
      DATABASE_URL: databaseUrl,
      BARE_API_KEY_HASHES: JSON.stringify({
        [hashKey(merchant.apiKey)]: { merchantId: merchant.merchantId, mode: merchant.mode },
      }),
      ...env,
    },
    '/health/ready',
  );
}
