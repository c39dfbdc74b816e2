import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  /** Header names and values as they were on the wire (names keep their casing). */
  rawHeaders: string[];
  body: string;
  json: any;
  at: number;
  path: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the request stays open until the client gives up or the receiver closes). */
  hold?: boolean;
  /** Answer only once this settles (a slow receiver the test lets go of). */
  after?: Promise<unknown>;
  /**
   * Send the status, headers and `body`, but never end the answer: `hold` keeps it open (until the
   * client gives up), `destroy` closes the connection a moment later.
   */
  unfinished?: 'hold' | 'destroy';
}

/** A real HTTP receiver on 127.0.0.1: records every request and answers as the test says. */
export class Receiver {
  readonly received: Received[] = [];
  private readonly held = new Set<ServerResponse>();
  answer: (request: Received, index: number) => Answer = () => ({ status: 200, body: 'ok' });

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const receiver = new Receiver(server, `http://127.0.0.1:${port}/hooks`);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request: Received = {
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body,
          json,
          at: performance.now(),
          path: req.url ?? '',
        };
        const index = receiver.received.push(request) - 1;
        const answer = receiver.answer(request, index);
        if (answer.hold) {
          receiver.held.add(res);
          res.on('close', () => receiver.held.delete(res));
          return;
        }
        const respond = () => {
          res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
          if (!answer.unfinished) {
            res.end(answer.body ?? '');
            return;
          }
          res.write(answer.body ?? '');
          receiver.held.add(res);
          res.on('close', () => receiver.held.delete(res));
          if (answer.unfinished === 'destroy') setTimeout(() => res.destroy(), 100);
        };
        if (answer.after) void answer.after.then(respond);
        else respond();
      });
    });
    return receiver;
  }

  /** Requests carrying this webhook id, in arrival order. */
  of(webhookId: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === webhookId);
  }

  async waitFor(
    predicate: (received: Received[]) => boolean,
    timeoutMs = 15_000,
    what = 'requests',
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline)
        throw new Error(`Receiver: ${what} never arrived; got ${this.received.length} request(s)`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
