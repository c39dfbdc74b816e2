import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** What the network does to one request. */
export type Fault =
  /** The request reaches the platform, which does the work; its answer is lost on the way back. */
  | 'lose-answer'
  /** The connection breaks before the request reaches the platform. */
  | 'reset'
  /** A proxy in between answers this status (with the platform's error body) instead. */
  | { status: number; code: string; retryAfter?: string };

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * A network between the client and the edge that misbehaves on demand: `fail(method, path, ...faults)`
 * makes the next matching requests meet those faults, in order; every other request passes through.
 * It only breaks transport, so the platform behind it stays the real one.
 */
export class FlakyNetwork {
  readonly seen: SeenRequest[] = [];
  private readonly faults: { method: string; path: string; fault: Fault }[] = [];
  private server?: Server;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const seen = {
          method: request.method!,
          url: request.url!,
          headers: request.headers,
          body,
          at: Date.now(),
        };
        this.seen.push(seen);
        void this.handle(seen, response.socket!, (status, headers, text) => {
          response.writeHead(status, headers).end(text);
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  fail(method: string, path: string, ...faults: Fault[]): void {
    for (const fault of faults) this.faults.push({ method, path, fault });
  }

  /** Requests seen for a method and path prefix. */
  requests(method: string, path: string): SeenRequest[] {
    return this.seen.filter((r) => r.method === method && r.url.startsWith(path));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(
    request: SeenRequest,
    socket: { destroy(): void },
    reply: (status: number, headers: Record<string, string>, body: string) => void,
  ): Promise<void> {
    const index = this.faults.findIndex((f) => f.method === request.method && request.url.startsWith(f.path));
    const fault = index >= 0 ? this.faults.splice(index, 1)[0].fault : undefined;
    if (fault === 'reset') return socket.destroy();
    if (fault !== undefined && fault !== 'lose-answer') {
      const body = {
        code: fault.code,
        description: 'proxy',
        message: `proxy answered ${fault.status}`,
        requestId: 'proxy',
      };
      return reply(
        fault.status,
        {
          'content-type': 'application/json',
          ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}),
        },
        JSON.stringify(body),
      );
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        ([name]) => !['host', 'content-length', 'connection'].includes(name),
      ),
    ) as Record<string, string>;
    const answer = await fetch(`${this.target}${request.url}`, {
      method: request.method,
      headers,
      body: request.body === '' ? undefined : request.body,
    });
    const text = await answer.text();
    if (fault === 'lose-answer') return socket.destroy();
    const hopByHop = ['content-length', 'transfer-encoding', 'content-encoding', 'connection', 'keep-alive'];
    reply(
      answer.status,
      Object.fromEntries([...answer.headers].filter(([name]) => !hopByHop.includes(name))),
      text,
    );
  }
}
