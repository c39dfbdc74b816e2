import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { SERVICE_NAME, type ApiDocsConfig } from './config.js';
import { PublicDocumentCache } from './public-document.js';

const SWAGGER_UI_DIR = (
  createRequire(import.meta.url)('swagger-ui-dist') as { getAbsoluteFSPath(): string }
).getAbsoluteFSPath();
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Byrd payment platform: public API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/docs/json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

/** The platform's error body (API-FACTS.md), as every service answers. */
function errorBody(request: FastifyRequest, code: string, description: string, message: string) {
  return { code, description, message, requestId: request.id };
}

/** GET /metrics: the Node process and HTTP requests, with the names and labels the other services use. */
function registerMetrics(app: FastifyInstance): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, and how long they took',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.observe({ method: request.method, route, status: reply.statusCode }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}

function registerDocs(app: FastifyInstance, documents: PublicDocumentCache): void {
  app.get('/docs', (request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/docs/init.js', (request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT));
  app.get('/docs/json', async (request, reply) => {
    const { document, unavailable } = await documents.get();
    if (unavailable.length) request.log.warn({ unavailable }, 'services did not answer /docs/json');
    if (!document) {
      return reply
        .code(502)
        .send(
          errorBody(request, 'BYRD999', 'Unhandled error', 'No service answered with its OpenAPI document'),
        );
    }
    return reply.header('cache-control', 'no-store').send(document);
  });
  app.register(fastifyStatic, { root: SWAGGER_UI_DIR, prefix: '/docs/', index: false, decorateReply: false });
}

/** The docs service, not listening yet (tests listen on port 0). */
export function buildApp(config: ApiDocsConfig): FastifyInstance {
  const app = Fastify({
    logger: { level: config.logLevel, base: { pid: process.pid, service: SERVICE_NAME } },
    // One line per answered request, written below (health and metrics probes left out).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && REQUEST_ID_PATTERN.test(sent) ? sent : randomUUID();
    },
    return503OnClosing: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.startsWith('/health') || request.url === '/metrics') return;
    request.log.info(
      {
        // The route pattern, not the URL: a path or query typed by anyone may carry a card number
        // or a credential (a checkout key), which must never reach a log.
        req: { method: request.method, route: request.routeOptions.url ?? null },
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request completed',
    );
  });
  registerMetrics(app);
  app.get('/health/live', async () => ({ status: 'ok' }));
  // Nothing to wait for: with services down it still serves what the others document.
  app.get('/health/ready', async () => ({ status: 'ok' }));
  registerDocs(app, new PublicDocumentCache(config.services, config));

  app.setNotFoundHandler((request, reply) => {
    const message = `No route for ${request.method} ${request.url.split('?')[0]}`;
    return reply.code(404).send(errorBody(request, 'BYRD901', 'Resource not found', message));
  });
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send(errorBody(request, 'BYRD900', 'Invalid input', error.message));
    }
    request.log.error({ err: error }, 'request failed');
    return reply
      .code(500)
      .send(
        errorBody(
          request,
          'BYRD999',
          'Unhandled error',
          'The documentation service failed to handle the request',
        ),
      );
  });
  return app;
}
