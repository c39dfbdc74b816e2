// Loopback ports and HTTP readiness checks.
import { createServer } from 'node:net';
import { fail, pollUntil } from './util.mjs';

const handedOut = new Set();

/** A TCP port free on 127.0.0.1 right now (never the same one twice in a run). */
export async function freePort(host = '127.0.0.1') {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise((resolvePort, reject) => {
      const server = createServer();
      server.unref();
      server.once('error', reject);
      server.listen({ port: 0, host }, () => {
        const { port: bound } = server.address();
        server.close(() => resolvePort(bound));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  return fail('Could not find a free TCP port on 127.0.0.1.');
}

export async function httpStatus(url, timeoutMs = 2000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return null;
  }
}

/**
 * Waits until `url` answers 200. `managed` (a ProcessGroup entry) makes it give up at once when
 * that process exits.
 */
export async function waitForHttp(url, { timeoutMs = 60_000, managed, what = url } = {}) {
  let exited = false;
  const ok = await pollUntil(
    async () => {
      if (managed && !managed.alive()) {
        exited = true;
        return true;
      }
      return (await httpStatus(url)) === 200;
    },
    { timeoutMs, intervalMs: 200 },
  );
  if (exited) fail(`${what} exited before it answered ${url}.`);
  if (!ok) fail(`${what} did not answer 200 on ${url} within ${timeoutMs / 1000} s.`);
}

/** One request with a JSON body; answers { status, headers, body } (body parsed when JSON). */
export async function requestJson(url, { method = 'GET', headers = {}, body } = {}) {
  const response = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
