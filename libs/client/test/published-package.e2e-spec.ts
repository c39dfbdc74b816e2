import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(PACKAGE_DIR, '../..');
const require = createRequire(import.meta.url);

/** What a merchant writes; the @ts-expect-error lines fail the check if the types turn loose. */
const CONSUMER_TS = `
import { ByrdApiError, ByrdClient, verifyWebhook, type OrderResponse, type TransactionStatus, type WebhookDelivery } from '@byrd/client';

const byrd = new ByrdClient({ apiKey: '00000000-0000-4000-8000-000000000000', retry: { maxRetries: 2 } });
export const order: Promise<OrderResponse> = byrd.orders.create({ amount: '25.00', currency: 'EUR', orderRef: 'cart-1' });
export const paid: TransactionStatus = 'Success';
// @ts-expect-error not a transaction status
export const wrong: TransactionStatus = 'Paid';
// @ts-expect-error currency is required
void byrd.orders.create({ amount: '25.00' });
// @ts-expect-error capture takes an amount object
void byrd.payments.capture('id', 6000);

export function onWebhook(body: string, headers: Record<string, string>): string | null {
  const delivery: WebhookDelivery = verifyWebhook({ body, headers, signingSecret: 'whsec_c2VjcmV0' });
  if (delivery.event === 'order.paid') return delivery.content.orderId;
  if (delivery.event === 'transaction.refund.success') return delivery.content.operationType;
  return null;
}

export function codeOf(error: unknown): string | undefined {
  return error instanceof ByrdApiError ? error.code + error.status + error.requestId : undefined;
}
`;

/**
 * The package as npm would publish it: only what a user needs, no import of a private workspace,
 * declarations that type-check in a project that has only this package, and every value the
 * declarations promise present at run time.
 */
describe('the published @byrd/client package', () => {
  let work: string;
  let installed: string;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'byrd-client-pack-'));
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
        cwd: PACKAGE_DIR,
        encoding: 'utf8',
      }),
    ) as { filename: string }[];
    installed = path.join(work, 'node_modules/@byrd/client');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', installed, '--strip-components=1']);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('holds the built JavaScript, one declaration file, the README and package.json only', () => {
    const files = execFileSync('find', ['.', '-type', 'f'], { cwd: installed, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((file) => file.slice(2))
      .sort();
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/index.js');
    expect(files.filter((f) => !/^dist\/.+\.js$/.test(f))).toEqual([
      'README.md',
      'dist/index.d.ts',
      'package.json',
    ]);
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('type-checks a merchant project against its declarations alone', () => {
    writeFileSync(path.join(work, 'consumer.ts'), CONSUMER_TS);
    writeFileSync(path.join(work, 'package.json'), JSON.stringify({ type: 'module' }));
    const tsc = require.resolve('typescript/bin/tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
    ];
    const typeRoots = ['--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node'];
    const result = (() => {
      try {
        return execFileSync(process.execPath, [tsc, ...args, ...typeRoots, 'consumer.ts'], {
          cwd: work,
          encoding: 'utf8',
        });
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? error);
      }
    })();
    expect(result).toBe('');
  });

  it('runs with no dependency installed, exporting every value its declarations name', async () => {
    const declarations = readFileSync(path.join(installed, 'dist/index.d.ts'), 'utf8');
    const declaredValues = [...declarations.matchAll(/^export declare (?:const|class|function) (\w+)/gm)].map(
      (m) => m[1],
    );
    const script = `import * as client from '@byrd/client';
      console.log(JSON.stringify({ keys: Object.keys(client), version: client.CLIENT_VERSION }));`;
    const { keys, version } = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: work, encoding: 'utf8' }),
    ) as { keys: string[]; version: string };
    expect(keys.sort()).toEqual(declaredValues.sort());
    // The user-agent's version is the package's.
    expect(version).toBe(JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')).version);
    expect(keys).toEqual(
      expect.arrayContaining(['ByrdClient', 'ByrdApiError', 'verifyWebhook', 'shopperAction']),
    );
  });
});
