import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * What tests that put a relay between a client and PostgreSQL share: the listening server, the
 * sockets to destroy on close, and the database URL pointed at the relay's port.
 */
export abstract class TcpRelay {
  protected readonly sockets = new Set<Socket>();
  protected constructor(private readonly server: Server) {}

  protected static listening(server: Server): Promise<void> {
    return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }

  /** `database` with its host and port replaced by the relay's. */
  url(database: URL | string): string {
    const url = new URL(database);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * A TCP relay to PostgreSQL that can go silent: it keeps every connection open but passes nothing
 * either way, as a server that vanished behind a failover or a partition does (no reset, no FIN).
 */
export class SilentableRelay extends TcpRelay {
  silent = false;
  private constructor(server: Server) {
    super(server);
  }

  static async start(target: URL): Promise<SilentableRelay> {
    const server = createServer();
    const relay = new SilentableRelay(server);
    server.on('connection', (client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        relay.sockets.add(from);
        from.on('data', (chunk) => relay.silent || to.write(chunk));
        from.on('close', () => to.destroy());
        from.on('error', () => to.destroy());
      }
    });
    await TcpRelay.listening(server);
    return relay;
  }
}
