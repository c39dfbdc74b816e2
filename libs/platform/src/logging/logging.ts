import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { stdSerializers, type DestinationStream } from 'pino';
import { logTraceFields } from '../tracing/tracing.js';

/**
 * Card data must never reach a log line (PCI DSS req. 3): any property named like a card, a PAN or
 * a CVV is censored wherever it sits in the first few levels of a logged object.
 */
const SENSITIVE_KEYS = ['card', 'Card', 'number', 'cvv', 'CVV', 'Cvv', 'pan', 'password', 'apiKey'];
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  ...SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `*.*.*.${key}`]),
];

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Uses the caller's (or the edge's) `x-request-id` when it is sane, else a new GUID, and pins it on
 * the request so Fastify, the logger and the error body all report the same id.
 */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const candidate = Array.isArray(header) ? header[0] : header;
  const id = candidate && REQUEST_ID_PATTERN.test(candidate) ? candidate : randomUUID();
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

let testDestination: DestinationStream | undefined;

/**
 * Tests that run services in-process read their JSON log lines here (e.g. to scan them for card
 * data) instead of stdout. Applies to the apps whose modules are built after the call; `undefined`
 * restores stdout.
 */
export function setLogDestination(destination: DestinationStream | undefined): void {
  testDestination = destination;
}

export function loggerParams(serviceName: string, level: string, format: 'json' | 'pretty' = 'json'): Params {
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
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = requestIdOf(req);
      res.setHeader('x-request-id', id);
      return id;
    },
    // Middie hands the middleware a url relative to its mount point; originalUrl is the request's.
    autoLogging: {
      ignore: (req: IncomingMessage & { originalUrl?: string }) =>
        (req.originalUrl ?? req.url)?.startsWith('/health') ?? false,
    },
    // The current span's trace and span ids on every line written while it runs.
    mixin: logTraceFields,
    // On every line through the root logger's bindings: no extra child logger per request.
    base: { pid: process.pid, hostname: hostname(), service: serviceName },
    serializers: {
      err: serializeError,
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
      }),
    },
  };
  return {
    pinoHttp: testDestination && format === 'json' ? [options, testDestination] : options,
    // Every path, the root included. nestjs-pino's default (`{/*splat}`) matches only `/` on Nest 12
    // with Fastify, so no request was logged.
    forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }],
  };
}
