import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServiceProcess, TestEnvironment, type ServiceProcess } from '@byrd/platform/testing';
import { standInWebDir } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(here, '../dist/main.js');

/** The hosted form as it runs in production: its own process (`node dist/main.js`), no database. */
describe('the hosted form as a process', () => {
  let env: TestEnvironment;
  let bff: ServiceProcess;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npx turbo run build" first`);
    env = await TestEnvironment.create();
    // It keeps no data: the run's variables without a database.
    const { DATABASE_URL: _none, ...vars } = await env.serviceEnv('hosted-form-bff', {
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      HOSTED_FORM_WEB_DIR: standInWebDir(),
    });
    bff = await startServiceProcess(MAIN, vars);
  });
  afterAll(async () => {
    bff?.child.kill('SIGKILL');
    await env?.cleanup();
  });

  it('starts without an error line in its log: operators alert on those', () => {
    const errors = bff
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)\b/.test(line));
    expect(errors).toEqual([]);
    expect(bff.output()).toContain('"level":30'); // it does log, as JSON lines
  });

  it("documents idempotency-key on the payment POST alone (forwarded to payments); without a database it runs no idempotency guard, so no 409", async () => {
    const spec = await (await fetch(`${bff.url}/docs/json`)).json();
    const keyed = Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) =>
          (operation.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'idempotency-key'),
        )
        .map(([method]) => `${method} ${path}`),
    );
    expect(keyed).toEqual(['post /checkout/api/v2/orders/{orderId}/payments']);
    const payment = spec.paths['/checkout/api/v2/orders/{orderId}/payments'].post;
    expect(payment.parameters.find((p: any) => p.name === 'idempotency-key')).toMatchObject({
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
    expect(payment.responses['409']).toBeUndefined();
  });
});
