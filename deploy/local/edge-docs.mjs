// The public API's one OpenAPI document, as the edge serves it at /docs (Swagger UI) and /docs/json:
// each service's own document (its /docs/json), cut to the paths the route table sends to that
// service, merged by openapi-merge (identical schemas shared, clashing ones renamed per service).
import { createRequire } from 'node:module';
import fastifyStatic from '@fastify/static';
import openapiMerge from 'openapi-merge';

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = require('swagger-ui-dist').getAbsoluteFSPath();
const FETCH_TIMEOUT_MS = 3_000;

/** The routes of deploy/routes.json grouped by service: [{ service, port, prefixes }]. */
export function servicesOf(routes) {
  const services = new Map();
  for (const { service, port, prefix } of routes) {
    const entry = services.get(service) ?? { service, port, prefixes: [] };
    entry.prefixes.push(prefix);
    services.set(service, entry);
  }
  return [...services.values()];
}

/** True when `path` is routed by one of `prefixes` (at a segment boundary, as the edge routes). */
function isRouted(path, prefixes) {
  return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** A service's document with only its publicly routed paths. */
export function publicPart(document, prefixes) {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(([path]) => isRouted(path, prefixes)),
  );
  return { ...document, paths };
}

async function fetchDocument(upstreamHost, { service, port }) {
  const response = await fetch(`http://${upstreamHost}:${port}/docs/json`, {
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${service} answered ${response.status}`);
  return response.json();
}

/**
 * The merged document of the services that answered; those that did not are named in its
 * description (and in `x-unavailable-services`), so a partial document never passes for whole.
 */
export async function mergedDocument(routes, upstreamHost) {
  const services = servicesOf(routes);
  const fetched = await Promise.allSettled(services.map((service) => fetchDocument(upstreamHost, service)));
  const inputs = [];
  const unavailable = [];
  fetched.forEach((result, index) => {
    const { service, prefixes } = services[index];
    if (result.status === 'rejected') unavailable.push(service);
    else inputs.push({ oas: publicPart(result.value, prefixes), dispute: { prefix: pascalCase(service) } });
  });
  if (inputs.length === 0) return { unavailable };
  const merged = openapiMerge.merge(inputs, {
    pruneUnusedComponents: true,
    info: {
      title: 'Byrd payment platform: public API',
      version: inputs[0].oas.info?.version ?? '2.0',
      description: describe(inputs[0].oas, unavailable),
    },
  });
  if (openapiMerge.isErrorResult(merged)) {
    throw new Error(`The services' documents do not merge: ${merged.type}: ${merged.message}`);
  }
  return {
    document: unavailable.length
      ? { ...merged.output, 'x-unavailable-services': unavailable }
      : merged.output,
    unavailable,
  };
}

/** The edge's sentence, the platform's error table (the same in every service's description). */
function describe(document, unavailable) {
  const description = document.info?.description ?? '';
  const errors = description.slice(Math.max(0, description.indexOf('Errors answer')));
  const missing = unavailable.length
    ? `\n\n**Not included: ${unavailable.join(', ')} did not answer; reload when it runs.**`
    : '';
  return `Every public path of the platform, as the edge routes it (deploy/routes.json).${missing}\n\n${errors}`;
}

function pascalCase(name) {
  return name.replace(/(^|-)(\w)/g, (_, __, letter) => letter.toUpperCase());
}

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

/** Registers GET /docs (Swagger UI), its assets under /docs/, and GET /docs/json. */
export function registerDocs(app, { routes, upstreamHost, log }) {
  app.get('/docs', (request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/docs/init.js', (request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT));
  app.get('/docs/json', async (request, reply) => {
    const { document, unavailable } = await mergedDocument(routes, upstreamHost);
    if (unavailable.length && log) console.warn(`docs: ${unavailable.join(', ')} did not answer /docs/json`);
    if (!document) {
      return reply.code(502).send({
        code: 'BYRD999',
        description: 'Unhandled error',
        message: 'No service answered with its OpenAPI document',
        requestId: request.id,
      });
    }
    return reply.header('cache-control', 'no-store').send(document);
  });
  app.register(fastifyStatic, { root: SWAGGER_UI_DIR, prefix: '/docs/', index: false, decorateReply: false });
}
