import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OrdersHarness } from './harness.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/local/cli.mjs');

/** The merchant's checkout origins: where the hosted form may send its shoppers and be embedded. */
describe('checkout origins (PUT/GET /api/v2/checkout-origins, npm run cli -- merchants origins)', () => {
  let h: OrdersHarness;

  beforeAll(async () => {
    h = await OrdersHarness.start();
  });
  afterAll(() => h?.stop());

  const put = (origins: unknown, apiKey = h.merchant.apiKey) =>
    h.request('PUT', '/api/v2/checkout-origins', { origins }, { 'x-api-key': apiKey });

  it('stores the origins normalised, reads them back, and keeps each merchant to its own', async () => {
    expect((await h.request('GET', '/api/v2/checkout-origins')).body).toEqual({ origins: [] });
    const set = await put(['HTTPS://Shop.Example.com/', 'https://shop.example.com', 'http://127.0.0.1:8443']);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ origins: ['https://shop.example.com', 'http://127.0.0.1:8443'] });
    expect((await h.request('GET', '/api/v2/checkout-origins')).body).toEqual(set.body);

    const other = await h.env.createMerchant('Other Shop');
    const theirs = await h.request('GET', '/api/v2/checkout-origins', undefined, {
      'x-api-key': other.apiKey,
    });
    expect(theirs.body).toEqual({ origins: [] });

    expect((await put([])).body).toEqual({ origins: [] });
  });

  it('refuses anything but an origin, plain http for a live merchant, and more than 20, naming the field', async () => {
    for (const bad of [
      ['https://shop.example.com/checkout'],
      ['https://shop.example.com?x=1'],
      ['shop.example.com'],
      ['ftp://shop.example.com'],
      ['https://user:pw@shop.example.com'],
      'https://shop.example.com',
    ]) {
      const answer = await put(bad);
      expect([bad, answer.status]).toEqual([bad, 400]);
      expect(answer.body.errors[0].field).toBe('origins');
    }
    // URL parses these, but their hosts are no host name or IP address: a wildcard would let any
    // site frame the form, and `;` or `,` would add directives or sources to its CSP.
    for (const bad of [
      'https://*',
      'https://*.com',
      'https://*.example.com',
      'https://a.com;sandbox',
      'https://a.com;frame-ancestors',
      'https://a,b.com',
      "https://a'b.com",
      'https://shop_1.example.com',
      'https://-shop.example.com',
    ]) {
      const answer = await put(['https://shop.example.com', bad]);
      expect([bad, answer.status]).toEqual([bad, 400]);
      expect(answer.body).toMatchObject({
        code: 'BYRD900',
        errors: [{ field: 'origins', message: expect.stringContaining('is not a host name or IP address') }],
      });
    }
    expect((await h.request('GET', '/api/v2/checkout-origins')).body).toEqual({ origins: [] });
    const many = Array.from({ length: 21 }, (_, i) => `https://shop${i}.example.com`);
    expect((await put(many)).status).toBe(400);

    const live = await h.env.createMerchant('Live Shop', 'live');
    const http = await put(['http://shop.example.com'], live.apiKey);
    expect(http.status).toBe(400);
    expect(http.body.errors[0].message).toContain('https');
    expect((await put(['https://shop.example.com'], live.apiKey)).status).toBe(200);
    expect(
      (await h.request('PUT', '/api/v2/checkout-origins', { origins: [] }, { 'x-api-key': '' })).status,
    ).toBe(401);
  });

  it('keeps accepting every host name and IP address: localhost, IPv4, IPv6 and IDN (as punycode)', async () => {
    const set = await put([
      'http://localhost:3000',
      'https://shop-1.example.co.uk',
      'http://10.0.0.2',
      'http://[::1]:8443',
      'https://bücher.example',
    ]);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      origins: [
        'http://localhost:3000',
        'https://shop-1.example.co.uk',
        'http://10.0.0.2',
        'http://[::1]:8443',
        'https://xn--bcher-kva.example',
      ],
    });
    await put([]);
  });

  it('keeps one whole list when several replacements race (compare-and-set on the merchant record)', async () => {
    const lists = Array.from({ length: 8 }, (_, i) => [
      `https://shop${i}.example.com`,
      `https://m${i}.example.com`,
    ]);
    const answers = await Promise.all(lists.map((origins) => put(origins)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const { origins } = (await h.request('GET', '/api/v2/checkout-origins')).body;
    expect(lists).toContainEqual(origins);
    await put([]);
  });

  it('is set and read with the CLI as well', () => {
    const env = { ...process.env, ...h.cliEnv() };
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'merchants', 'origins', h.merchant.merchantId, ...args, '--json'], {
        env,
        encoding: 'utf8',
      });
    const set = run('--set', 'https://a.example.com, https://b.example.com');
    expect(set.status).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      merchantId: h.merchant.merchantId,
      origins: ['https://a.example.com', 'https://b.example.com'],
    });
    const refused = run('--set', 'https://a.example.com/path');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('must be an origin only');
    expect(JSON.parse(run().stdout).origins).toEqual(['https://a.example.com', 'https://b.example.com']);
    expect(JSON.parse(run('--clear').stdout).origins).toEqual([]);
  });
});
