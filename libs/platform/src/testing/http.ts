import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../http/bootstrap.js';

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

/** A service's Nest app in this process, listening on a free loopback port. */
export async function startTestApp(
  module: unknown,
  serviceName: string,
  trustProxy?: number | string[],
): Promise<{ app: NestFastifyApplication; url: string }> {
  const app = await createHttpApp({ module, serviceName, description: 'test', trustProxy });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
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
