import type { IncomingMessage, Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { Logger, PinoLogger } from 'nestjs-pino';
import { classTransformerMetadataStorage, ErrorBodySchema, errorCodesMarkdown } from '@byrd/contracts';
import type { z } from 'zod';
import { ConfigError, loadConfig, type StatelessConfig } from '../config/config.js';
import { requestIdOf } from '../logging/logging.js';
import { IdempotencyGuard } from '../idempotency/idempotency.guard.js';
import { RUNS_IDEMPOTENCY } from '../messaging/tokens.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { completeDocument } from './docs.js';
import { answerClientError, answerFrameworkError, MAX_PATH_PARAM_LENGTH } from './framework-errors.js';
import { acceptFormPostsOnlyWhereTaken } from './form-posts.js';
import { observeRequests } from './observe-requests.js';
import { Rpc } from '../rpc/rpc.js';
import { flushTraces, startTracing } from '../tracing/tracing.js';
import { exitOnSignal } from '../process/exit-on-signal.js';

export const BODY_LIMIT_BYTES = 1_048_576;

export interface HttpServiceOptions {
  /** The root module of the app (it imports PlatformModule.forRoot). */
  module: unknown;
  serviceName: string;
  description: string;
  version?: string;
  /** Fastify's `trustProxy`: hops or proxy addresses (TRUSTED_PROXIES); default one hop. */
  trustProxy?: number | string[];
}

/** Builds a service's Nest app on Fastify with the platform's conventions, ready to listen. */
export async function createHttpApp(options: HttpServiceOptions): Promise<NestFastifyApplication> {
  startTracing(options.serviceName);
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req: IncomingMessage) => requestIdOf(req),
    // The client address for logs and rate limits: only the configured proxies' entries of
    // X-Forwarded-For are believed, never what the client wrote to the left of them.
    trustProxy: trustProxyOption(options.trustProxy ?? 1),
    // While closing, still serve requests on open connections (answered with Connection: close)
    // instead of Fastify's bare 503: a rolling deploy must not fail a request it already accepted.
    return503OnClosing: false,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
  const app = await NestFactory.create<NestFastifyApplication>(options.module as never, adapter, {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  acceptEmptyJsonBodies(app);
  acceptFormPostsOnlyWhereTaken(app, BODY_LIMIT_BYTES);
  const fastify = app.getHttpAdapter().getInstance();
  countRequests(fastify, app.get(ServiceMetrics));
  observeRequests(fastify, PinoLogger.root);
  storeIdempotentAnswers(fastify, app);
  closeConnectionsOnceClosing(fastify);

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(`${options.serviceName} API`)
      .setDescription(`${options.description}\n\n${errorCodesMarkdown()}`)
      .setVersion(options.version ?? '2.0')
      .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, 'api-key')
      .addSecurityRequirements('api-key')
      .build(),
    { extraModels: [ErrorBodySchema] },
  );
  const complete = completeDocument(withDtoSchemas(document), {
    idempotency: app.get<boolean>(RUNS_IDEMPOTENCY, { strict: false }),
  });
  SwaggerModule.setup('docs', app, complete, { jsonDocumentUrl: 'docs/json' });
  DOCUMENTS.set(app, complete);
  return app;
}

const DOCUMENTS = new WeakMap<NestFastifyApplication, OpenAPIObject>();

/** The OpenAPI document an app built by {@link createHttpApp} serves at /docs/json. */
export function openApiDocumentOf(app: NestFastifyApplication): OpenAPIObject {
  const document = DOCUMENTS.get(app);
  if (!document) throw new Error('This app was not built by createHttpApp: it has no OpenAPI document');
  return document;
}

const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Every answer in `http_request_duration_seconds`: each route gets its own onResponse hook with its
 * pattern bound at registration (Fastify's `request.routeOptions` builds an object per call), and
 * the answers of no route (404) are counted by an app-wide hook under one label value.
 */
function countRequests(fastify: FastifyInstance, metrics: ServiceMetrics): void {
  fastify.addHook('onRoute', (route) => {
    const pattern = route.url;
    const count: onResponseHookHandler = (request, reply, done) => {
      metrics.observeRequest(request.method, pattern, reply.statusCode, reply.elapsedTime / 1_000);
      done();
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), count];
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.is404) {
      // Any token is a method to Node's parser: an unknown one must not grow the series either.
      const method = HTTP_METHODS.has(request.method) ? request.method : 'OTHER';
      metrics.observeRequest(method, undefined, reply.statusCode, reply.elapsedTime / 1_000);
    }
    done();
  });
}

/** Fastify's rule for a hop count (the adapter's type takes addresses or a function only). */
function trustProxyOption(
  trusted: number | string[],
): string[] | ((address: string, hop: number) => boolean) {
  return typeof trusted === 'number' ? (_address, hop) => hop < trusted : trusted;
}

/** A service with a database stores the answer of a POST with an `idempotency-key` before it leaves. */
function storeIdempotentAnswers(fastify: FastifyInstance, app: NestFastifyApplication): void {
  if (!app.get<boolean>(RUNS_IDEMPOTENCY, { strict: false })) return;
  const guard = app.get(IdempotencyGuard, { strict: false });
  fastify.addHook('onSend', async (request, reply, payload) => {
    await guard.answered(request, reply, payload);
    return payload;
  });
}

/**
 * Once the server is closing, every answer ends its connection. Fastify says `Connection: close` only
 * to requests that arrive while closing; a kept-alive connection whose request was in flight at
 * SIGTERM stayed open after its answer, so the server never finished closing (the grace ran out, exit
 * 1) and the client (the edge, the hosted form's backend) kept sending this replica new requests.
 */
function closeConnectionsOnceClosing(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // A callback hook, not an async one: it runs on every answer, and costs no promise that way.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing && reply.request.raw.httpVersionMajor < 2) void reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * `Content-Type: application/json` with no body (WooCommerce's DELETE of a webhook setting, a
 * release sent without an amount) is `{}`, not Fastify's 400 "Body cannot be empty". Anything else
 * goes to Fastify's own parser: its body limit, its 400 for malformed JSON and its refusal of
 * `__proto__` / `constructor.prototype` keys stay as they are.
 */
function acceptEmptyJsonBodies(app: NestFastifyApplication): void {
  const parseJson = app.getHttpAdapter().getInstance().getDefaultJsonParser('error', 'error');
  app.useBodyParser<Server>('application/json', { bodyLimit: BODY_LIMIT_BYTES }, (request, body, done) => {
    const text = body.toString('utf8');
    if (text.trim() === '') {
      done(null, {});
      return;
    }
    void parseJson(request, text, done);
  });
}

/**
 * Stops a service as SIGTERM does: HTTP and the RPC subscriptions stop taking work together (an
 * RPC taken late in a long HTTP drain would start a payment the grace then cuts off), the requests
 * being served finish (and commit), then consumers and the outbox relay drain, so their events are
 * still published by this process.
 */
export async function closeInOrder(app: NestFastifyApplication): Promise<void> {
  await Promise.all([app.getHttpAdapter().close(), app.get(Rpc).beforeApplicationShutdown()]);
  await app.close();
}

/**
 * Starts a service: builds the app and listens on HTTP_HOST:HTTP_PORT. On SIGTERM/SIGINT it stops
 * taking requests, finishes in-flight ones, drains consumers and pools, then exits 0 (PID 1 in a
 * container ignores a re-raised signal, so the exit is explicit); SHUTDOWN_GRACE_MS bounds it.
 */
export async function startHttpService(
  options: HttpServiceOptions,
  config: StatelessConfig,
): Promise<NestFastifyApplication> {
  // Until it has started, a signal ends it at once (nothing was taken yet).
  const exitWhileStarting = exitOnSignal(`while ${options.serviceName} was starting`);
  const app = await createHttpApp(options);
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  exitWhileStarting();
  const logger = app.get(Logger);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received: shutting down ${options.serviceName}`);
    setTimeout(() => {
      logger.error(`Shutdown took longer than ${config.SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS).unref();
    closeInOrder(app)
      .then(() => flushTraces())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error(`Shutdown failed: ${String(error)}`);
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return app;
}

/**
 * The request DTOs live in @byrd/contracts with class-validator rules and no Swagger decorators;
 * their OpenAPI schemas are generated from those same rules, so the description cannot drift.
 */
function withDtoSchemas(document: OpenAPIObject): OpenAPIObject {
  const generated = validationMetadatasToSchemas({
    refPointerPrefix: '#/components/schemas/',
    classTransformerMetadataStorage: classTransformerMetadataStorage as never,
  });
  const schemas = { ...(document.components?.schemas ?? {}) };
  for (const [name, schema] of Object.entries(generated)) {
    const current = schemas[name] as { properties?: object } | undefined;
    if (!current?.properties || Object.keys(current.properties).length === 0) schemas[name] = schema as never;
  }
  const known = new Set(Object.keys(schemas).map((name) => `#/components/schemas/${name}`));
  return withoutDanglingRefs(
    { ...document, components: { ...document.components, schemas } },
    known,
  ) as OpenAPIObject;
}

/**
 * A property typed `string | number`, `Record<...>` or an array of a union reflects as `Object` or
 * `Array`, which the generator writes as a `$ref` to a schema that does not exist: such a property
 * takes any JSON value (its validators say which), so the dangling reference goes and its siblings
 * (`type`, `items`, ...) stay.
 */
function withoutDanglingRefs(schema: unknown, known: Set<string>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withoutDanglingRefs(item, known));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === '$ref' && !known.has(String(value))))
      .map(([key, value]) => [key, withoutDanglingRefs(value, known)]),
  );
}

/**
 * A service's `main`: loads its config (a bad variable stops it with a sentence naming it, no
 * stack trace), then starts it. In production NATS_URL and the service's `requiredInProduction`
 * variables must be set (see loadConfig).
 */
export async function runHttpService<S extends z.ZodType<StatelessConfig>>(
  schema: S,
  service: (config: z.infer<S>) => HttpServiceOptions,
  requiredInProduction: readonly string[] = [],
): Promise<void> {
  try {
    const config = loadConfig(schema, process.env, ['NATS_URL', ...requiredInProduction]);
    await startHttpService({ trustProxy: config.TRUSTED_PROXIES, ...service(config) }, config);
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
}
