#!/usr/bin/env node
// The local edge: one HTTP entry point (default http://127.0.0.1:8080) that routes public
// paths to the services, from the same route table the Helm Ingress is generated from
// (deploy/routes.json). Forwarding is done by @fastify/http-proxy; this file only wires it.
//
//   node deploy/local/edge.mjs            (npm start runs it for you)
//
// Environment: EDGE_PORT (8080), EDGE_HOST (127.0.0.1), ROUTES_FILE (deploy/routes.json),
// UPSTREAM_HOST (127.0.0.1, where the services listen), LOG_LEVEL (info; "silent" for none).
//
// Behaviour:
//   - each routes[].prefix goes to http://UPSTREAM_HOST:<port of its service>, path unchanged;
//     a prefix matches only at a segment boundary (/api/v2/orders, /api/v2/orders/..., never
//     /api/v2/ordersX);
//   - every request gets an x-request-id (kept when the client sent a sane one), which is
//     forwarded upstream and echoed in the response;
//   - GET /health is answered by the edge itself;
//   - /docs (the public API's one OpenAPI document) is a route like the others: to apps/api-docs;
//   - unknown paths answer 404 BYRD901, an unreachable upstream 502 BYRD999, both with the
//     platform's JSON error body.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULT_ROUTES_FILE = resolve(ROOT, 'deploy/routes.json');
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
/** The services' body limit (libs/platform BODY_LIMIT_BYTES). */
const BODY_LIMIT_BYTES = 1_048_576;

/** Reads and checks deploy/routes.json; returns [{ prefix, service, port }]. */
export function loadRoutes(routesFile = DEFAULT_ROUTES_FILE) {
  const table = JSON.parse(readFileSync(routesFile, 'utf8'));
  const services = table.services ?? {};
  if (!Array.isArray(table.routes)) throw new Error(`${routesFile}: "routes" must be an array`);
  return table.routes.map((route, index) => {
    const where = `${routesFile}: routes[${index}]`;
    const service = services[route.service];
    if (!service) throw new Error(`${where} names service "${route.service}", which is not in "services"`);
    if (!Number.isInteger(service.port)) throw new Error(`${where}: service "${route.service}" has no port`);
    if (typeof route.prefix !== 'string' || !route.prefix.startsWith('/') || route.prefix.endsWith('/')) {
      throw new Error(`${where}: prefix must start with "/" and must not end with "/"`);
    }
    return { prefix: route.prefix, service: route.service, port: service.port };
  });
}

function errorBody(request, code, description, message) {
  return { code, description, message, requestId: request.id };
}

function pickRequestId(rawRequest) {
  const sent = rawRequest.headers['x-request-id'];
  return typeof sent === 'string' && REQUEST_ID_PATTERN.test(sent) ? sent : randomUUID();
}

/**
 * The request's path as the log may show it: no query string (a browser payment's `?checkoutKey=`)
 * and no long digit run (a card number typed where a token id goes): the services log the rest.
 */
function loggablePath(url) {
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : `${url.slice(0, queryAt)}?…`;
  return path.replace(/\d{12,}/g, '[redacted]');
}

function logLine(request, reply) {
  const ms = reply.elapsedTime.toFixed(0);
  process.stdout.write(
    `${request.method} ${loggablePath(request.url)} ${reply.statusCode} ${ms}ms id=${request.id}\n`,
  );
}

function registerRoute(app, route, upstreamHost, log) {
  app.register(httpProxy, {
    upstream: `http://${upstreamHost}:${route.port}`,
    prefix: route.prefix,
    rewritePrefix: route.prefix,
    replyOptions: {
      // Hand the request id (and where the request came from) to the service.
      rewriteRequestHeaders: (request, headers) => ({
        ...headers,
        'x-request-id': request.id,
        'x-forwarded-for': headers['x-forwarded-for']
          ? `${headers['x-forwarded-for']}, ${request.ip}`
          : request.ip,
        'x-forwarded-host': request.headers.host ?? '',
        'x-forwarded-proto': request.protocol,
      }),
      // The services answer 503 on purpose (e.g. not ready); pass it on, never retry.
      retryDelay: () => null,
      onError: (reply, { error }) => {
        if (log) console.warn(`upstream ${route.service} failed: ${error.message} id=${reply.request.id}`);
        const timedOut = error.statusCode === 504;
        const message = timedOut
          ? `The ${route.service} service did not answer in time`
          : `The ${route.service} service is unavailable`;
        reply
          .code(timedOut ? 504 : 502)
          .send(errorBody(reply.request, 'BYRD999', 'Unhandled error', message));
      },
    },
  });
}

/** Builds the Fastify app (not listening). Tests may use app.inject() on it. */
export function buildEdge({ routes, upstreamHost = '127.0.0.1', log = true } = {}) {
  const app = Fastify({
    // Fastify's own JSON logger stays off: the hooks below write one short line per request.
    logger: false,
    genReqId: pickRequestId,
    requestIdHeader: false,
    // A path that does not decode as UTF-8 is refused by the router itself: in our body too.
    frameworkErrors: (error, request, reply) => {
      reply
        .code(400)
        .header('x-request-id', request.id)
        .send(
          errorBody(
            request,
            'BYRD900',
            'Invalid input',
            'The request path is not valid: it does not decode as UTF-8',
          ),
        );
    },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // The services refuse a body over the limit with 413 and close the connection while the edge
    // is still streaming it, which would surface as a 502: refuse it here first, as they would.
    // The connection stays open (Node discards the unread body) so the client, still sending,
    // reads the answer instead of a reset.
    if (Number(request.headers['content-length']) > BODY_LIMIT_BYTES) {
      reply
        .code(413)
        .send(errorBody(request, 'BYRD900', 'Invalid input', 'The request body exceeds the 1 MB limit'));
    }
  });
  if (log) app.addHook('onResponse', async (request, reply) => logLine(request, reply));

  app.get('/health', async () => ({ status: 'ok' }));

  for (const route of routes) registerRoute(app, route, upstreamHost, log);

  app.setNotFoundHandler((request, reply) => {
    const message = `No route for ${request.method} ${request.url.split('?')[0]}`;
    reply.code(404).send(errorBody(request, 'BYRD901', 'Resource not found', message));
  });
  app.setErrorHandler((error, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      reply.code(status).send(errorBody(request, 'BYRD900', 'Invalid input', error.message));
      return;
    }
    if (log) console.error(`edge error: ${error.stack ?? error.message} id=${request.id}`);
    reply
      .code(500)
      .send(errorBody(request, 'BYRD999', 'Unhandled error', 'The edge failed to handle the request'));
  });
  return app;
}

/**
 * Starts the edge and resolves once it listens.
 * Returns { app, url, close }; port 0 picks a free port (see url).
 */
export async function createEdge({
  routesFile = DEFAULT_ROUTES_FILE,
  port = 8080,
  host = '127.0.0.1',
  upstreamHost = '127.0.0.1',
  log = true,
} = {}) {
  const app = buildEdge({ routes: loadRoutes(routesFile), upstreamHost, log });
  await app.listen({ port, host });
  const { port: boundPort } = app.server.address();
  return { app, url: `http://${host}:${boundPort}`, close: () => app.close() };
}

function portFromEnv(name, fallback) {
  const value = process.env[name] ?? String(fallback);
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be a TCP port number (0-65535), got "${value}"`);
  }
  return port;
}

async function main() {
  const routesFile = resolve(process.env.ROUTES_FILE ?? DEFAULT_ROUTES_FILE);
  const upstreamHost = process.env.UPSTREAM_HOST ?? '127.0.0.1';
  const edge = await createEdge({
    routesFile,
    port: portFromEnv('EDGE_PORT', 8080),
    host: process.env.EDGE_HOST ?? '127.0.0.1',
    upstreamHost,
    log: process.env.LOG_LEVEL !== 'silent',
  });
  for (const route of loadRoutes(routesFile)) {
    console.log(`${route.prefix} -> http://${upstreamHost}:${route.port} (${route.service})`);
  }
  console.log(`edge listening on ${edge.url}`);

  const stop = async () => {
    await edge.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`edge: ${error.message}`);
    process.exit(1);
  });
}
