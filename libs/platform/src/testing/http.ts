import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp, openApiDocumentOf } from '../http/bootstrap.js';
import { OpenApiResponseValidator, type ResponseMismatch } from './openapi-responses.js';

/** A service's answer as a test reads it: the body parsed when it is JSON, else the text. */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * Sends a request to a service over real HTTP with a merchant's `x-api-key`. An object body is sent
 * as JSON; a string body as it is (to test malformed JSON).
 */
export function callService(
  baseUrl: string,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return callHttp(baseUrl, method, path, body, { 'x-api-key': apiKey, ...headers });
}

/** {@link callService} with only the headers given (e.g. a browser's checkout key, no API key). */
export async function callHttp(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (an HTML page, /metrics): the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * A service's Nest app in this process, listening on a free loopback port. Every answer it gives is
 * checked against its own OpenAPI document (/docs/json): a status, body or media type the document
 * does not describe is printed at once and makes `app.close()` fail, so the suite that saw it fails.
 */
export async function startTestApp(
  module: unknown,
  serviceName: string,
  trustProxy?: number | string[],
): Promise<{ app: NestFastifyApplication; url: string }> {
  const app = checkAnswersAgainstDocument(
    await createHttpApp({ module, serviceName, description: 'test', trustProxy }),
    serviceName,
  );
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    // A service that refuses to start (a lifecycle hook threw) must not leave its pools and
    // broker connections open behind the test that expected the refusal.
    await app.close().catch(() => undefined);
    throw error;
  }
  return { app, url: await app.getUrl() };
}

function checkAnswersAgainstDocument(
  app: NestFastifyApplication,
  serviceName: string,
): NestFastifyApplication {
  const validator = new OpenApiResponseValidator(openApiDocumentOf(app));
  const mismatches: ResponseMismatch[] = [];
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (request, reply, payload, done) => {
      const route = request.routeOptions.url;
      if (route !== undefined && request.method !== 'HEAD') {
        const contentType = reply.getHeader('content-type');
        let mismatch: ResponseMismatch | undefined;
        try {
          mismatch = validator.check(
            request.method,
            route,
            reply.statusCode,
            typeof contentType === 'string' ? contentType : undefined,
            typeof payload === 'string'
              ? payload
              : Buffer.isBuffer(payload)
                ? payload.toString('utf8')
                : undefined,
          );
        } catch (error) {
          // A schema Ajv cannot compile (a dangling $ref) is a defect of the document, not of the answer.
          const problem = `the document's schema for it is broken: ${(error as Error).message}`;
          mismatch = { method: request.method, route, status: reply.statusCode, problem };
        }
        if (mismatch) {
          mismatches.push(mismatch);
          // One line at once (console.error would add a stack per answer); the suite fails at close().
          process.stderr.write(
            `${serviceName}: answer not in its OpenAPI document: ${describeMismatch(mismatch)}\n`,
          );
        }
      }
      done(null, payload);
    });
  // Nest's app is a Proxy that ignores assignments: close() is wrapped by a Proxy of our own.
  const close = async () => {
    await app.close();
    if (mismatches.length > 0) {
      throw new Error(
        `${serviceName} gave ${mismatches.length} answer(s) its OpenAPI document does not describe:\n` +
          mismatches.map(describeMismatch).join('\n'),
      );
    }
  };
  return new Proxy(app, {
    get: (target, property, receiver) =>
      property === 'close' ? close : Reflect.get(target, property, receiver),
  });
}

function describeMismatch(mismatch: ResponseMismatch): string {
  return `${mismatch.method} ${mismatch.route} -> ${mismatch.status}: ${mismatch.problem}`;
}

/**
 * The value of one series in a Prometheus text exposition: the sample of metric `name` whose labels
 * include `labels` (in any order); undefined when there is none.
 */
export function metricValue(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of exposition.split('\n')) {
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    const found = new Map(
      [...(sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((label) => [label[1], label[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) return Number(sample[3]);
  }
  return undefined;
}
