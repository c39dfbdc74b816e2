// What the payments benchmark measures, started: orders (consuming payments' events), payments, the
// bare handler, all behind one edge process, on migrated databases of the run.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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
import { RESULTS_DIR, note, round, step, timestamp } from '../core/util.js';
import { prefillPayments } from './prefill.js';

export interface PaymentsStackSettings {
  withOrders: boolean;
  bare3dsRow: boolean;
  poolSize: string | null;
  prefillRows: number;
  profile: boolean;
  serviceEnv: Record<string, string>;
}

export interface PaymentsStack {
  merchant: TestMerchant;
  db: { payments: string; orders: string; bare: string };
  orders: Listening | null;
  payments: Listening;
  bare: Listening;
  edge: Listening;
  profileDir: string | null;
}

/** The run's databases of payments, orders and the bare handler, migrated (and prefilled with --prefill). */
async function prepareDatabases({ env, group }: RunContext, s: PaymentsStackSettings) {
  const db = {
    payments: await env.database('payments'),
    orders: await env.database('orders'),
    bare: await env.database('bare'),
  };
  await migrate(group, 'payments', db.payments);
  await migrate(group, 'orders', db.orders);
  await migrateBare(group, db.bare);
  if (s.prefillRows > 0) {
    step(`Prefilling ${s.prefillRows} rows of history into both databases`);
    const started = Date.now();
    await prefillPayments(db.payments, s.prefillRows);
    await prefillPayments(db.bare, s.prefillRows, { sessions: s.bare3dsRow });
    note(`done in ${round((Date.now() - started) / 1000, 1)} s`);
  }
  return db;
}

export async function startPaymentsStack(
  context: RunContext,
  s: PaymentsStackSettings,
  startedAt: Date,
): Promise<PaymentsStack> {
  const { env, group, logDir } = context;
  const db = await prepareDatabases(context, s);
  const merchant = await env.createMerchant('Bench Merchant');
  note(`sandbox merchant ${merchant.merchantId}`);

  step(`Starting ${s.withOrders ? 'orders, ' : ''}payments, the bare handler and the edge`);
  const edgePort = await freePort();
  const edgeUrl = `http://127.0.0.1:${edgePort}`;
  const poolEnv: Record<string, string> = s.poolSize ? { DATABASE_POOL_SIZE: s.poolSize } : {};
  const orders = s.withOrders
    ? await startService(
        group,
        'orders',
        await env.serviceEnv('orders', await freePort(), {
          PUBLIC_BASE_URL: edgeUrl,
          CHECKOUT_URL: `${edgeUrl}/checkout`,
        }),
      )
    : null;
  const profileDir = s.profile ? join(RESULTS_DIR, `payments-${timestamp(startedAt)}-profile`) : null;
  const payments = await startService(
    group,
    'payments',
    await env.serviceEnv('payments', await freePort(), {
      PUBLIC_BASE_URL: edgeUrl,
      CARD_SEAL_KEY: randomBytes(32).toString('base64'), // one replica: its own key will do
      ...poolEnv,
      ...s.serviceEnv,
    }),
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const bare = await startBareHandler(group, db.bare, merchant, {
    BARE_3DS_ROW: String(s.bare3dsRow),
    ...poolEnv,
  });
  const ports: Record<string, number> = {
    payments: payments.port,
    ...(orders ? { orders: orders.port } : {}),
  };
  const routes = writeRoutesFile(logDir, ports, [
    { prefix: BARE_PREFIX, service: 'bench-bare', port: bare.port },
  ]);
  const edge = await startEdge(group, routes, edgePort);
  note(
    `edge ${edge.url} -> payments :${payments.port}${orders ? `, orders :${orders.port}` : ''}, bare :${bare.port} (${BARE_PREFIX})`,
  );
  return { merchant, db, orders, payments, bare, edge, profileDir };
}
