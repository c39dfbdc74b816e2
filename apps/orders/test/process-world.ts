import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMigrations } from '@byrd/platform';
import {
  freePort,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from '../src/database.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

/**
 * Orders as its own process (`node dist/main.js`, as in production), for tests that kill it or
 * take its database away: this run's environment, migrated database and a merchant; `start()`
 * launches the process (again after a kill), `stop()` kills it and drops the run.
 */
export class OrdersProcessWorld {
  service?: ServiceProcess;

  private constructor(
    readonly env: TestEnvironment,
    readonly vars: Record<string, string>,
    readonly merchant: TestMerchant,
  ) {}

  /** `natsUrl`: a broker of the test's own (a `PrivateNatsServer`), else the shared one. */
  static async create(extraEnv: Record<string, string> = {}, natsUrl?: string): Promise<OrdersProcessWorld> {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run "npx turbo run build --filter=@byrd/orders" first`);
    const env = await TestEnvironment.create({ natsUrl });
    const vars = await env.serviceEnv('orders', { HTTP_PORT: String(await freePort()), ...extraEnv });
    await runMigrations({ url: vars.DATABASE_URL, entities: ORDERS_ENTITIES, migrations: ORDERS_MIGRATIONS });
    return new OrdersProcessWorld(env, vars, await env.createMerchant());
  }

  async start(extraEnv: Record<string, string> = {}): Promise<ServiceProcess> {
    this.service = await startServiceProcess(MAIN, { ...this.vars, ...extraEnv });
    return this.service;
  }

  async stop(): Promise<void> {
    this.service?.child.kill('SIGKILL');
    await this.env.cleanup();
  }
}
