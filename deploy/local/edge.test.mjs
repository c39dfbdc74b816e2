// The local edge against a real upstream: node --test (run by `npm test` through turbo).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEdge, loadRoutes } from './edge.mjs';

let upstream;
let edge;
let deadPort;

/** A stand-in service that echoes what reached it. */
function startUpstream() {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url, requestId: req.headers['x-request-id'] }));
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

before(async () => {
  upstream = await startUpstream();
  const probe = await startUpstream();
  deadPort = probe.address().port;
  await new Promise((r) => probe.close(r));
  const dir = mkdtempSync(join(tmpdir(), 'edge-'));
  const routesFile = join(dir, 'routes.json');
  writeFileSync(
    routesFile,
    JSON.stringify({
      services: { orders: { port: upstream.address().port }, payments: { port: deadPort } },
      routes: [
        { prefix: '/api/v2/orders', service: 'orders' },
        { prefix: '/api/v2/payment', service: 'payments' },
      ],
    }),
  );
  edge = await createEdge({ routesFile, port: 0, log: false });
});

after(async () => {
  await edge?.close();
  await new Promise((r) => upstream?.close(r));
});

test('routes a prefix and everything below it to its service with the path unchanged', async () => {
  const response = await fetch(`${edge.url}/api/v2/orders/abc?x=1`, {
    headers: { 'x-request-id': 'req-42' },
  });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    method: 'GET',
    url: '/api/v2/orders/abc?x=1',
    requestId: 'req-42',
  });
  assert.equal(response.headers.get('x-request-id'), 'req-42');

  const post = await fetch(`${edge.url}/api/v2/orders`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  const echoed = await post.json();
  assert.equal(echoed.url, '/api/v2/orders');
  assert.match(echoed.requestId, /^[0-9a-f-]{36}$/, 'a request id is added when the client sent none');
});

test('matches prefixes only at path-segment boundaries and answers unknown paths 404 BYRD901', async () => {
  const response = await fetch(`${edge.url}/api/v2/ordersX`);
  assert.equal(response.status, 404);
  const body = await response.json();
  assert.equal(body.code, 'BYRD901');
  assert.equal(body.message, 'No route for GET /api/v2/ordersX');
  assert.ok(body.requestId);
});

test('answers 502 BYRD999 naming the service when it is down', async () => {
  const response = await fetch(`${edge.url}/api/v2/payment`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(response.status, 502);
  const body = await response.json();
  assert.equal(body.code, 'BYRD999');
  assert.equal(body.message, 'The payments service is unavailable');
});

test('the real route table is valid and routes /api/v2/orders to orders', () => {
  const routes = loadRoutes();
  assert.ok(routes.some((r) => r.prefix === '/api/v2/orders' && r.service === 'orders'));
});

test('refuses a body over 1 MB itself with 413 BYRD900 instead of a 502 when the service hangs up', async () => {
  const response = await fetch(`${edge.url}/api/v2/orders`, {
    method: 'POST',
    body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(response.status, 413);
  const body = await response.json();
  assert.equal(body.code, 'BYRD900');
  assert.equal(body.message, 'The request body exceeds the 1 MB limit');
});

test('answers a path that does not decode as UTF-8 with 400 BYRD900 in the platform body', async () => {
  const response = await fetch(`${edge.url}/api/v2/orders/%ED%A0%80`);
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.deepEqual(Object.keys(body).sort(), ['code', 'description', 'message', 'requestId']);
  assert.equal(body.code, 'BYRD900');
  assert.equal(response.headers.get('x-request-id'), body.requestId);
});

/** A stand-in service that serves `document` at /docs/json, as every service does. */
function startDocumentedUpstream(document) {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url !== '/docs/json') res.statusCode = 404;
      res.end(JSON.stringify(req.url === '/docs/json' ? document : {}));
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function serviceDocument(title, paths, schemas) {
  return {
    openapi: '3.0.0',
    info: { title, version: '2.0', description: `${title}\n\nErrors answer { code, description, message }` },
    paths,
    components: { schemas },
  };
}

const answer = (schema) => ({
  responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: schema } } } } },
});

test('serves the public API as one OpenAPI document at /docs/json: routed paths of every service, shared schemas once, internal paths left out', async () => {
  const errorBody = { type: 'object', properties: { code: { type: 'string' } } };
  const orders = await startDocumentedUpstream(
    serviceDocument(
      'orders API',
      {
        '/api/v2/orders/{orderId}': { get: answer('#/components/schemas/Order') },
        '/internal/sweep': { post: answer('#/components/schemas/Sweep') },
      },
      {
        Order: { type: 'object', properties: { orderId: { type: 'string' } } },
        Sweep: { type: 'object' },
        ErrorBody: errorBody,
      },
    ),
  );
  const payments = await startDocumentedUpstream(
    serviceDocument(
      'payments API',
      { '/api/v2/payment': { post: answer('#/components/schemas/Order') } },
      // A schema of the same name and another shape: both stay, the second renamed.
      { Order: { type: 'object', properties: { amount: { type: 'string' } } }, ErrorBody: errorBody },
    ),
  );
  const dir = mkdtempSync(join(tmpdir(), 'edge-docs-'));
  const routesFile = join(dir, 'routes.json');
  writeFileSync(
    routesFile,
    JSON.stringify({
      services: {
        orders: { port: orders.address().port },
        payments: { port: payments.address().port },
        webhooks: { port: deadPort },
      },
      routes: [
        { prefix: '/api/v2/orders', service: 'orders' },
        { prefix: '/api/v2/payment', service: 'payments' },
        { prefix: '/api/v1/settings', service: 'webhooks' },
      ],
    }),
  );
  const docsEdge = await createEdge({ routesFile, port: 0, log: false });
  try {
    const response = await fetch(`${docsEdge.url}/docs/json`);
    assert.equal(response.status, 200);
    const document = await response.json();
    assert.deepEqual(Object.keys(document.paths).sort(), ['/api/v2/orders/{orderId}', '/api/v2/payment']);
    assert.equal(document.info.title, 'Byrd payment platform: public API');
    assert.deepEqual(Object.keys(document.components.schemas).sort(), ['Order', 'PaymentsOrder']);
    assert.equal(
      document.paths['/api/v2/payment'].post.responses[200].content['application/json'].schema.$ref,
      '#/components/schemas/PaymentsOrder',
    );
    // The webhook service is down: the document says it is partial instead of passing for whole.
    assert.deepEqual(document['x-unavailable-services'], ['webhooks']);
    assert.match(document.info.description, /Not included: webhooks did not answer/);

    const page = await fetch(`${docsEdge.url}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    const bundle = await fetch(
      `${docsEdge.url}${(await page.text()).match(/src="([^"]*swagger-ui-bundle\.js)"/)[1]}`,
    );
    assert.equal(bundle.status, 200, 'the Swagger UI bundle the page loads is served');
    assert.match(await bundle.text(), /SwaggerUIBundle/);
  } finally {
    await docsEdge.close();
    await new Promise((r) => orders.close(r));
    await new Promise((r) => payments.close(r));
  }
});

test('answers /docs/json 502 BYRD999 when no service answers with its document', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-docs-'));
  const routesFile = join(dir, 'routes.json');
  writeFileSync(
    routesFile,
    JSON.stringify({
      services: { payments: { port: deadPort } },
      routes: [{ prefix: '/api/v2/payment', service: 'payments' }],
    }),
  );
  const docsEdge = await createEdge({ routesFile, port: 0, log: false });
  try {
    const response = await fetch(`${docsEdge.url}/docs/json`);
    assert.equal(response.status, 502);
    const body = await response.json();
    assert.equal(body.code, 'BYRD999');
    assert.equal(body.message, 'No service answered with its OpenAPI document');
  } finally {
    await docsEdge.close();
  }
});
