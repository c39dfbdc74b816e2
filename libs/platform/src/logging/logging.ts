import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage } from 'node:http';
import { context, createContextKey, type Context } from '@opentelemetry/api';
import type { Params } from 'nestjs-pino';
import { containsCardNumber } from '@byrd/contracts';
import { pino, stdSerializers, symbols, type DestinationStream, type Logger } from 'pino';
import { logTraceFields } from '../tracing/tracing.js';
import { loggableUrl } from './loggable-url.js';

/**
 * Card data and credentials must never reach a log line (PCI DSS req. 3): any property named like a
 * card, a PAN, a CVV or a credential is censored wherever it sits in a logged object, at any depth,
 * after serialisation.
 */
const SENSITIVE_KEYS = new Set([
  'card',
  'Card',
  'number',
  'cvv',
  'CVV',
  'Cvv',
  'pan',
  'password',
  'apiKey',
  'x-api-key',
  'authorization',
  'cookie',
]);
const CENSOR = '[REDACTED]';

const censorSensitive = (key: string, value: unknown): unknown => (SENSITIVE_KEYS.has(key) ? CENSOR : value);

/**
 * pino's own stringify (JSON.stringify, safe-stable-stringify for circular objects, a placeholder
 * when even that fails: a log call never throws), censoring by key at every depth. pino's `redact`
 * with wildcard paths (`*.*.card`) clones per path and cost ~25 µs per line, a tenth of a payment's
 * CPU; a replacer costs ~2 µs and misses no depth. It sees what `toJSON` returns: a class whose
 * `toJSON` prints a card into a string would escape it (none of ours has a `toJSON`).
 */
type StringifySafe = (value: unknown, replacer: typeof censorSensitive) => string;

function censoringStringify(value: unknown, stringifySafe: StringifySafe): string {
  try {
    return JSON.stringify(value, censorSensitive);
  } catch {
    try {
      return stringifySafe(value, censorSensitive);
    } catch {
      return '"[unable to serialize]"';
    }
  }
}

let testDestination: DestinationStream | undefined;

/**
 * Tests that run services in-process read their JSON log lines here (e.g. to scan them for card
 * data) instead of stdout. Applies to the apps whose modules are built after the call; `undefined`
 * restores stdout.
 */
export function setLogDestination(destination: DestinationStream | undefined): void {
  testDestination = destination;
}

/**
 * The service's root logger, which nestjs-pino (Nest's logger, injected PinoLoggers) and the
 * request log hooks share; its children inherit the censoring.
 */
export function createLogger(
  serviceName: string,
  level: string,
  format: 'json' | 'pretty' = 'json',
  destination: DestinationStream | undefined = testDestination,
): Logger {
  const options = {
    level,
    ...(format === 'pretty'
      ? {
          transport: {
            target: 'pino-pretty',
            options: { singleLine: true, ignore: 'pid,hostname,service' },
          },
        }
      : {}),
    name: serviceName,
    // The keys at the top of a line (a string or a number is not stringified; see below for objects).
    redact: { paths: [...SENSITIVE_KEYS].map((key) => `[${JSON.stringify(key)}]`), censor: CENSOR },
    // The request being served (see withRequestLog) and the current span's trace and span ids, on
    // every line written while they are current: no child logger per request.
    mixin: logContextFields,
    // On every line through the root logger's bindings.
    base: { pid: process.pid, hostname: hostname(), service: serviceName },
    serializers: {
      err: serializeError,
      // A raw request logged by mistake is reduced to what names it (never its headers, its body,
      // a card number or a credential in its URL). The request on every line (withRequestLog)
      // already is.
      req: (req: RequestLogFields) =>
        REQUEST_LOGS.has(req) ? req : { id: req.id, method: req.method, url: loggableUrl(String(req.url)) },
    },
  };
  const logger = destination && format === 'json' ? pino(options, destination) : pino(options);
  // pino has no option for its stringify; its symbols are exported for integrations like this one.
  // Objects on a line, and objects interpolated into a message (`%o`, `%j`).
  const internals = logger as unknown as Record<symbol, unknown>;
  const stringifySafe = internals[symbols.stringifySafeSym] as StringifySafe;
  internals[symbols.stringifySym] = censoringStringify;
  internals[symbols.formatOptsSym] = {
    stringify: (value: unknown) => censoringStringify(value, stringifySafe),
  };
  return logger;
}

/** What every line written while a request is served says of it. */
export interface RequestLogFields {
  id: string;
  method: string;
  /** As {@link loggableUrl} makes it: no card number, no credential. */
  url: string;
}

const REQUEST_LOG = createContextKey('byrd.request-log');
const REQUEST_LOGS = new WeakSet<RequestLogFields>();

/**
 * `ctx` with the request whose lines it writes (entered with the request's span). Its `url` must
 * be the loggable one: it is written on every line as it is.
 */
export function withRequestLog(ctx: Context, request: RequestLogFields): Context {
  REQUEST_LOGS.add(request);
  return ctx.setValue(REQUEST_LOG, request);
}

function logContextFields(): { req?: RequestLogFields; trace_id?: string; span_id?: string } {
  const req = context.active().getValue(REQUEST_LOG) as RequestLogFields | undefined;
  const traceFields = logTraceFields();
  return req ? { req, ...traceFields } : traceFields;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * A caller's request id worth keeping: short, plain, and no card number, as it is written into every
 * log line of the request, its error body and any answer kept under its idempotency-key.
 */
export function isSaneRequestId(id: string): boolean {
  return REQUEST_ID_PATTERN.test(id) && !containsCardNumber(id);
}

/**
 * Uses the caller's (or the edge's) `x-request-id` when it is sane (`isSaneRequestId`), else a new
 * GUID, and pins it on the request so Fastify, the logger and the error body all report the same id.
 */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const candidate = Array.isArray(header) ? header[0] : header;
  const id = candidate && isSaneRequestId(candidate) ? candidate : randomUUID();
  req.headers['x-request-id'] = id;
  return id;
}

/**
 * Errors as pino writes them, except a failed SQL statement (TypeORM's QueryFailedError copies the
 * driver's error onto itself): only what names the fault is kept (the statement, the code, the
 * constraint, table and column), never its `parameters` nor PostgreSQL's `detail`, which quotes the
 * offending values ("Key (email)=(...)"), and none of the driver's circular references (logged
 * before as "[unable to serialize, circular reference]").
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (!('query' in error && 'driverError' in error)) return stdSerializers.err(error);
  const failed = error as Error & Record<string, unknown>;
  return {
    type: error.constructor.name,
    message: error.message,
    stack: error.stack,
    query: failed.query,
    code: failed.code,
    constraint: failed.constraint,
    table: failed.table,
    column: failed.column,
  };
}

let serviceLogger: Logger | undefined;

/**
 * nestjs-pino over the service's logger. Its pino-http middleware is not mounted (`forRoutes: []`):
 * the request context and the line per request come from Fastify hooks (`observeRequests`), which
 * cost a fraction of a child logger and a serialised request per request.
 */
export function loggerParams(serviceName: string, level: string, format: 'json' | 'pretty' = 'json'): Params {
  // nestjs-pino keeps the first root logger of the process; a process running several apps (tests)
  // builds no more (a `pretty` one would start a worker thread each).
  serviceLogger ??= createLogger(serviceName, level, format);
  return {
    pinoHttp: {
      logger: serviceLogger,
      autoLogging: false,
      wrapSerializers: false,
    },
    forRoutes: [],
  };
}
