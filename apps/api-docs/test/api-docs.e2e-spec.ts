import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A stand-in service that serves `document` at /docs/json, as every service does, counting reads. */
async function documentedService(
  document: object,
): Promise<{ port: number; reads: () => number; close(): Promise<void> }> {
  let reads = 0;
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url !== '/docs/json') {
      res.statusCode = 404;
      res.end('{}');
      return;
    }
    reads += 1;
    res.end(JSON.stringify(document));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    reads: () => reads,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function serviceDocument(title: string, paths: object, schemas: object) {
  return {
    openapi: '3.0.0',
    info: { title, version: '2.0', description: `${title}\n\nErrors answer { code, description, message }` },
    paths,
    components: { schemas },
  };
}

const answer = (schema: string) => ({
  responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: schema } } } } },
});

/** What the tests read of a merged document (or of an error body). */
interface Answer {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
  info: { title: string; description: string };
  'x-unavailable-services'?: string[];
  code?: string;
}

const read = async (response: Response) => (await response.json()) as Answer;

const ERROR_BODY = { type: 'object', properties: { code: { type: 'string' } } };
const ORDERS = serviceDocument(
  'orders API',
  {
    '/api/v2/orders/{orderId}': { get: answer('#/components/schemas/Order') },
    '/internal/sweep': { post: answer('#/components/schemas/Sweep') },
  },
  {
    Order: { type: 'object', properties: { orderId: { type: 'string' } } },
    Sweep: { type: 'object' },
    ErrorBody: ERROR_BODY,
  },
);
const PAYMENTS = serviceDocument(
  'payments API',
  { '/api/v2/payment': { post: answer('#/components/schemas/Order') } },
  // A schema of the same name and another shape: both stay, the second renamed.
  { Order: { type: 'object', properties: { amount: { type: 'string' } } }, ErrorBody: ERROR_BODY },
);

/** The environment of the docs service for a route table of `ports` (service -> port). */
function environment(
  ports: Record<string, number>,
  routes: { prefix: string; service: string }[],
  extra = {},
) {
  const services = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, { port }]));
  return {
    ROUTE_TABLE: JSON.stringify({ services, routes }),
    UPSTREAM_URL_TEMPLATE: 'http://127.0.0.1:{port}',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

async function started(env: NodeJS.ProcessEnv): Promise<{ app: FastifyInstance; url: string }> {
  const app = buildApp(loadConfig(env));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url };
}

describe('api-docs: the public API as one OpenAPI document', () => {
  const open: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
  });

  it('merges the routed paths of every service, shares identical schemas, leaves internal paths out and names a service that did not answer', async () => {
    const orders = await documentedService(ORDERS);
    const payments = await documentedService(PAYMENTS);
    open.push(orders, payments);
    const { app, url } = await started(
      environment(
        { orders: orders.port, payments: payments.port, 'webhook-service': await deadPort(), 'api-docs': 1 },
        [
          { prefix: '/api/v2/orders', service: 'orders' },
          { prefix: '/api/v2/payment', service: 'payments' },
          { prefix: '/api/v1/settings', service: 'webhook-service' },
          { prefix: '/docs', service: 'api-docs' },
        ],
      ),
    );
    open.push(app);

    const response = await fetch(`${url}/docs/json`);
    expect(response.status).toBe(200);
    const document = await read(response);
    expect(Object.keys(document.paths).sort()).toEqual(['/api/v2/orders/{orderId}', '/api/v2/payment']);
    expect(document.info.title).toBe('Byrd payment platform: public API');
    expect(Object.keys(document.components.schemas).sort()).toEqual(['Order', 'PaymentsOrder']);
    expect(
      document.paths['/api/v2/payment'].post.responses[200].content['application/json'].schema.$ref,
    ).toBe('#/components/schemas/PaymentsOrder');
    // The webhook service is down: the document says it is partial instead of passing for whole; the
    // docs service's own route is not a document to merge.
    expect(document['x-unavailable-services']).toEqual(['webhook-service']);
    expect(document.info.description).toMatch(/Not included: webhook-service did not answer/);
    expect(document.info.description).toMatch(/Errors answer/);
  });

  it('serves Swagger UI at /docs with the assets the page loads', async () => {
    const { app, url } = await started(
      environment({ orders: await deadPort() }, [{ prefix: '/api/v2/orders', service: 'orders' }]),
    );
    open.push(app);
    const page = await fetch(`${url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    for (const asset of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const loaded = await fetch(`${url}${asset[1]}`);
      // Read to the end: a body left unread keeps its connection busy, and the app's close waits on it.
      await loaded.arrayBuffer();
      expect({ asset: asset[1], status: loaded.status }).toEqual({ asset: asset[1], status: 200 });
    }
    const bundle = await fetch(`${url}/docs/swagger-ui-bundle.js`);
    expect(await bundle.text()).toMatch(/SwaggerUIBundle/);
  });

  it('answers 502 BYRD999 in the platform error body when no service answers', async () => {
    const { app, url } = await started(
      environment({ payments: await deadPort() }, [{ prefix: '/api/v2/payment', service: 'payments' }]),
    );
    open.push(app);
    const response = await fetch(`${url}/docs/json`, { headers: { 'x-request-id': 'docs-test-1' } });
    expect(response.status).toBe(502);
    expect(response.headers.get('x-request-id')).toBe('docs-test-1');
    expect(await response.json()).toEqual({
      code: 'BYRD999',
      description: 'Unhandled error',
      message: 'No service answered with its OpenAPI document',
      requestId: 'docs-test-1',
    });
  });

  it('asks the services once for concurrent readers and keeps a complete document for DOCS_CACHE_SECONDS', async () => {
    const orders = await documentedService(ORDERS);
    open.push(orders);
    const { app, url } = await started(
      environment({ orders: orders.port }, [{ prefix: '/api/v2/orders', service: 'orders' }], {
        DOCS_CACHE_SECONDS: '60',
      }),
    );
    open.push(app);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/docs/json`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    await fetch(`${url}/docs/json`);
    expect(orders.reads()).toBe(1);
  });

  it('never keeps a partial document: the next reader asks again, and gets the whole once the service is back', async () => {
    const orders = await documentedService(ORDERS);
    open.push(orders);
    const paymentsPort = await deadPort();
    const { app, url } = await started(
      environment(
        { orders: orders.port, payments: paymentsPort },
        [
          { prefix: '/api/v2/orders', service: 'orders' },
          { prefix: '/api/v2/payment', service: 'payments' },
        ],
        { DOCS_CACHE_SECONDS: '60' },
      ),
    );
    open.push(app);
    expect((await read(await fetch(`${url}/docs/json`)))['x-unavailable-services']).toEqual(['payments']);

    const payments = createServer((req, res) => res.end(JSON.stringify(PAYMENTS))).listen(
      paymentsPort,
      '127.0.0.1',
    );
    await once(payments, 'listening');
    open.push({ close: () => new Promise((resolve) => payments.close(resolve)) });
    const whole = await read(await fetch(`${url}/docs/json`));
    expect(whole['x-unavailable-services']).toBeUndefined();
    expect(Object.keys(whole.paths).sort()).toEqual(['/api/v2/orders/{orderId}', '/api/v2/payment']);
    expect(orders.reads()).toBe(2);
  });

  it('exports its requests at /metrics and answers unknown paths 404 BYRD901', async () => {
    const { app, url } = await started(
      environment({ orders: await deadPort() }, [{ prefix: '/api/v2/orders', service: 'orders' }]),
    );
    open.push(app);
    await fetch(`${url}/docs`);
    const missing = await fetch(`${url}/api/v2/orders`);
    expect(missing.status).toBe(404);
    expect((await read(missing)).code).toBe('BYRD901');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/docs",status="200"\} 1/,
    );
    expect(metrics).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/,
    );
    expect(metrics).toMatch(/process_resident_memory_bytes/);
  });

  it.each([
    [{}, 'ROUTE_TABLE is required but not set.'],
    [
      { ROUTE_TABLE: '{"services":{},"routes":[{"prefix":"/api","service":"orders"}]}' },
      'names service "orders", which is not in "services"',
    ],
    [
      { ROUTE_TABLE: '{"services":{"o":{"port":1}},"routes":[{"prefix":"/api/","service":"o"}]}' },
      'does not end with "/"',
    ],
    [{ ROUTE_TABLE: 'not json' }, 'ROUTE_TABLE is invalid'],
  ])('refuses to start with a bad environment, naming the variable (%j)', (env, message) => {
    expect(() => loadConfig({ UPSTREAM_URL_TEMPLATE: 'http://127.0.0.1:{port}', ...env })).toThrow(message);
  });

  it('takes a variable set to the empty string as unset, as every service does', () => {
    const config = loadConfig({
      ROUTE_TABLE: '{"services":{},"routes":[]}',
      UPSTREAM_URL_TEMPLATE: 'http://127.0.0.1:{port}',
      HTTP_PORT: '',
      DOCS_CACHE_SECONDS: '',
      DOCS_FETCH_TIMEOUT_MS: '',
    });
    expect([config.port, config.cacheSeconds, config.fetchTimeoutMs]).toEqual([3006, 30, 3_000]);
  });

  it('refuses an upstream template without {port}', () => {
    expect(() =>
      loadConfig({ ROUTE_TABLE: '{"services":{},"routes":[]}', UPSTREAM_URL_TEMPLATE: 'http://orders' }),
    ).toThrow('UPSTREAM_URL_TEMPLATE is invalid');
  });

  it('runs as a process: ready on /health/ready, logs no card number or key of a URL, and exits 0 on SIGTERM', async () => {
    const port = await deadPort();
    const child = spawn(process.execPath, [path.join(APP_DIR, 'dist/main.js')], {
      env: {
        ...process.env,
        ...environment({ orders: await deadPort() }, [{ prefix: '/api/v2/orders', service: 'orders' }]),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    try {
      let ready = 0;
      for (let attempt = 0; attempt < 300 && ready !== 200; attempt += 1) {
        ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
          (r) => r.status,
          () => 0,
        );
        if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ready).toBe(200);
      const checkoutKey = 'f7c5d6e8-9a0b-4c13-8d4e-5f6a7b8c9d0e';
      for (const pathname of ['/docs/4111111111111111', `/docs/json?checkoutKey=${checkoutKey}`])
        await fetch(`http://127.0.0.1:${port}${pathname}`).then((r) => r.arrayBuffer());
      child.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      // Each request is logged (by its route pattern), never with what its URL carried.
      expect(output.match(/request completed/g)).toHaveLength(2);
      expect(output).not.toContain('4111111111111111');
      expect(output).not.toContain(checkoutKey);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
