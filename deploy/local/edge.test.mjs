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
let routesFile;

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
  routesFile = join(dir, 'routes.json');
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

test('passes a browser preflight (OPTIONS, query and all) through to the service, which answers it', async () => {
  // payments answers the preflight of its ?checkoutKey= routes itself: the edge must not eat it.
  const response = await fetch(`${edge.url}/api/v2/orders/abc/pay?checkoutKey=k`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://shop.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,idempotency-key',
    },
  });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    method: 'OPTIONS',
    url: '/api/v2/orders/abc/pay?checkoutKey=k',
    requestId: response.headers.get('x-request-id'),
  });
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

test("logs each request's path without its query string or a card number typed into it", async () => {
  const logging = await createEdge({ routesFile, port: 0, log: true });
  const written = [];
  const write = process.stdout.write;
  process.stdout.write = (chunk, ...rest) => {
    if (String(chunk).includes(' id=')) return written.push(String(chunk)) > 0;
    return write.call(process.stdout, chunk, ...rest);
  };
  try {
    const answer = await fetch(`${logging.url}/api/v2/orders/4111111111111111?checkoutKey=k-secret`);
    assert.equal(answer.status, 200);
    await answer.text();
  } finally {
    process.stdout.write = write;
    await logging.close();
  }
  const line = written.find((l) => l.startsWith('GET '));
  assert.match(line, /^GET \/api\/v2\/orders\/\[redacted\]\?… 200 \d+ms id=/);
  assert.doesNotMatch(written.join(''), /4111111111111111|k-secret/);
});
