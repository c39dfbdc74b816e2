// The webhook benchmark's receiver: a node:http server on 127.0.0.1 that answers every POST 200 at
// once (empty body) and records, per request, the body's `content.transactionId` (the key the
// harness published the event under), the `webhook-id` header and the arrival time as epoch
// milliseconds with sub-millisecond resolution (performance.timeOrigin + performance.now(), the
// clock the harness stamps its publishes with, so both can run in different processes).
//
// In the harness process: `const receiver = await startReceiver()`. As its own process (the
// default, so its CPU is measured apart from the publisher): `node bench/dist/webhooks/receiver.js`
// with HTTP_PORT; then GET /count answers { requests, distinct } and GET /arrivals every record.
//
// ANSWER=500 makes it a failing receiver (500 at once), ANSWER=hang one that never answers (the
// service gives up at WEBHOOK_TIMEOUT_MS): the noisy neighbour of the benchmark's fairness phase.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const KEY = /"transactionId":"([^"]+)"/;

/** One request: the event's key (its transactionId), the webhook-id header, the arrival (epoch ms). */
export type Arrival = [key: string | null, webhookId: string, atEpochMs: number];

/** What a receiver tells, in this process or from its own. */
export interface Receiver {
  url: string;
  count(): Promise<{ requests: number; distinct: number }>;
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

/** The recording state and the request handler, shared by both ways of running. */
function recorder(answer = '200') {
  const arrivals: Arrival[] = [];
  const ids = new Set<string>();
  let requests = 0;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return false;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      if (answer === '500') res.writeHead(500, { 'content-length': '0' }).end();
      else if (answer !== 'hang') res.writeHead(200, { 'content-length': '0' }).end();
      const body = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['webhook-id'];
      const id = typeof header === 'string' ? header : '';
      requests++;
      ids.add(id);
      arrivals.push([KEY.exec(body)?.[1] ?? null, id, at]);
    });
    return true;
  };
  return {
    handle,
    count: () => ({ requests, distinct: ids.size }),
    arrivals: () => arrivals,
  };
}

function listen(server: Server, port: number): Promise<number> {
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A receiver in this process: { url, count(), arrivals(), close() }. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const state = recorder();
  const server = createServer((req, res) => {
    if (!state.handle(req, res)) res.writeHead(404).end();
  });
  const bound = await listen(server, port);
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    count: async () => state.count(),
    arrivals: async () => state.arrivals(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Client of a receiver running as its own process (see the file's header). */
export function remoteReceiver(base: string): Receiver {
  const get = async <T>(path: string) =>
    (await fetch(`${base}${path}`, { signal: AbortSignal.timeout(30_000) })).json() as Promise<T>;
  return {
    url: `${base}/hooks`,
    count: () => get('/count'),
    arrivals: () => get('/arrivals'),
    close: async () => undefined, // stopped by its ProcessGroup
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const answer = process.env.ANSWER ?? '200';
  if (!['200', '500', 'hang'].includes(answer)) throw new Error(`ANSWER is 200, 500 or hang, got ${answer}`);
  const state = recorder(answer);
  const server = createServer((req, res) => {
    if (state.handle(req, res)) return;
    const route = req.url;
    const payload =
      route === '/count'
        ? state.count()
        : route === '/arrivals'
          ? state.arrivals()
          : route === '/health'
            ? { ok: true }
            : null;
    if (payload === null) {
      res.writeHead(404).end();
      return;
    }
    const text = JSON.stringify(payload);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  const port = await listen(server, Number(process.env.HTTP_PORT) || 0);
  console.log(`receiver on 127.0.0.1:${port}`);
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
