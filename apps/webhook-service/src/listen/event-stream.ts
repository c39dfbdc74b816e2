import type { FastifyReply } from 'fastify';
import type { ListenSession } from './listen-sessions.js';

const HEARTBEAT_MS = 15_000;
/**
 * How often an open stream asks whether its API key is still valid: a key revoked (`keys revoke`)
 * ends its streams as every service stops accepting it, within a second or two, not when the
 * client next reconnects. The answer comes from the watched key cache (ApiKeyRegistry).
 */
export const KEY_RECHECK_MS = 1_000;

/** Resolves true once `raw` has written out what it buffered, false if it closed or `ms` passed first. */
function drained(raw: FastifyReply['raw'], ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      raw.off('drain', onDrain);
      raw.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    raw.on('drain', onDrain);
    raw.on('close', onClose);
  });
}

/**
 * Writes a session as server-sent events on the raw response (Fastify lets go of it), until the
 * client goes away or the session is closed (shutdown): `ready` with the signing secret, then one
 * `delivery` per webhook, or its API key is revoked (`keyStillValid`, asked every KEY_RECHECK_MS).
 * A comment every 15 s keeps proxies from closing an idle stream. Events are
 * read only as fast as the client takes them: one that leaves a delivery unread for
 * `drainTimeoutMs` (LISTEN_DRAIN_TIMEOUT_MS) is let go, and its CLI reconnects.
 */
export function streamSession(
  reply: FastifyReply,
  session: ListenSession,
  drainTimeoutMs: number,
  keyStillValid: () => Promise<boolean>,
): void {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // nginx (the Ingress) must pass each event on at once, not buffer the stream.
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
    'x-request-id': String(reply.request.id),
  });
  const send = (event: string, data: unknown) =>
    raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('ready', { sessionId: session.id, signingSecret: session.signingSecret });
  const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
  // A revoked key ends the session (an error asking is not a revocation: it asks again).
  const keyCheck = setInterval(() => {
    void keyStillValid().then(
      (valid) => valid || void session.close(),
      () => undefined,
    );
  }, KEY_RECHECK_MS);
  raw.once('close', () => void session.close());
  // A client that left while the session was opening (NATS slow) closed before that listener: end
  // the session now, or its consumer reads every event until the replica restarts. The loop below
  // still runs: the messages end only once read.
  if (raw.destroyed) void session.close();
  void (async () => {
    let stalled = false;
    try {
      for await (const delivery of session.deliveries) {
        if (!send('delivery', delivery) && !(await drained(raw, drainTimeoutMs))) {
          stalled = true;
          break;
        }
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(keyCheck);
      await session.close();
      // What a stalled client left unread would wait behind an orderly end for ever: drop it.
      if (stalled) raw.destroy();
      else raw.end();
    }
  })();
}
