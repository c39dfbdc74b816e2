import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { closeInOrder } from '@byrd/platform';
import { TEST_NATS_URL } from '@byrd/platform/testing';
import { LISTEN_SESSIONS_PER_MERCHANT, ListenSessions } from '../src/listen/listen-sessions.js';
import { WebhookHarness } from './harness.js';

interface StreamEvent {
  event: string;
  data: any;
}

/** A `listen` stream read as a CLI reads it: server-sent events over a plain HTTP GET. */
class ListenStream {
  readonly events: StreamEvent[] = [];
  private closed = false;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {}

  static async open(baseUrl: string, apiKey: string, query = ''): Promise<ListenStream> {
    const abort = new AbortController();
    const response = await fetch(`${baseUrl}/api/v1/webhooks/listen${query}`, {
      headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const stream = new ListenStream(response, abort);
    if (response.status === 200) void stream.read();
    return stream;
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of this.response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) this.events.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted by the test
    }
    this.closed = true;
  }

  async waitFor(count: number, timeoutMs = 5_000): Promise<StreamEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`Got ${JSON.stringify(this.events)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.events;
  }

  async ended(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  close(): void {
    this.abort.abort();
  }
}

/**
 * A TCP link to the real NATS server that a test can hold: while held nothing passes either way (a
 * broker that stalls, as in a long GC pause), then everything held goes on, in order.
 */
class HeldNatsLink {
  private holding = false;
  private readonly queued: [Socket, Buffer][] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async open(): Promise<HeldNatsLink> {
    const target = new URL(TEST_NATS_URL);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const link = new HeldNatsLink(server, `nats://127.0.0.1:${(server.address() as { port: number }).port}`);
    server.on('connection', (client) => {
      const broker = connect(Number(target.port || 4222), target.hostname);
      link.forward(client, broker);
      link.forward(broker, client);
    });
    return link;
  }

  private forward(from: Socket, to: Socket): void {
    this.sockets.add(from);
    from.on('data', (chunk: Buffer) => (this.holding ? this.queued.push([to, chunk]) : to.write(chunk)));
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  }

  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
    for (const [to, chunk] of this.queued.splice(0)) to.write(chunk);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('listen: a live stream of signed deliveries (GET /api/v1/webhooks/listen)', () => {
  let h: WebhookHarness;

  beforeAll(async () => {
    h = await WebhookHarness.start();
  });
  afterAll(() => h?.stop());

  const consumers = async () => (await h.env.nats.jsm.consumers.list(h.env.streamName).next()).length;

  it("streams the merchant's chosen events, each signed as a real delivery, and nothing else", async () => {
    const durableConsumers = await consumers();
    const stream = await ListenStream.open(h.baseUrl, h.merchant.apiKey, '?events=order.paid,chargeback.won');
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');
    const [ready] = await stream.waitFor(1);
    expect(ready).toEqual({
      event: 'ready',
      data: { sessionId: expect.any(String), signingSecret: expect.stringMatching(/^whsec_/) },
    });
    expect(await consumers()).toBe(durableConsumers + 1);

    const other = h.merchant;
    const paid = await h.publish('order.paid', 'card');
    await h.publish('order.created', null); // not asked for
    const stranger = await h.freshMerchant();
    await h.publish('order.paid', 'card'); // another merchant's
    h.merchant = other;
    const won = await h.publish('chargeback.won', 'card');

    const events = await stream.waitFor(3);
    await new Promise((r) => setTimeout(r, 200));
    expect(stream.events.map((e) => [e.event, e.data.event, e.data.body])).toHaveLength(3);
    const deliveries = events.slice(1).map((e) => e.data);
    expect(deliveries.map((d) => d.event)).toEqual(['order.paid', 'chargeback.won']);
    for (const delivery of deliveries) {
      // A receiver checks it exactly as it checks a setting's deliveries.
      expect(() =>
        new Webhook(ready.data.signingSecret).verify(delivery.body, delivery.headers),
      ).not.toThrow();
      expect(delivery.headers['webhook-id']).toBe(delivery.id);
    }
    expect(JSON.parse(deliveries[0].body)).toEqual({
      id: deliveries[0].id,
      event: 'order.paid',
      paymentMethod: 'card',
      settingsId: ready.data.sessionId,
      attemptId: expect.any(String),
      createdAt: expect.any(String),
      content: expect.objectContaining({ orderId: paid.data.orderId, status: 'paid' }),
    });
    expect(JSON.parse(deliveries[1].body).content).toMatchObject({
      chargebackId: (won.data as { chargebackId: string }).chargebackId,
    });
    expect(stranger.merchantId).not.toBe(other.merchantId);
    // Nothing is written: the settings' webhooks know nothing of a listen session.
    expect(await h.rows(`SELECT id FROM webhooks WHERE event_id = $1`, [paid.id])).toEqual([]);

    // Going away ends the session and removes its consumer.
    stream.close();
    const deadline = Date.now() + 5_000;
    while ((await consumers()) !== durableConsumers && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await consumers()).toBe(durableConsumers);
  });

  it('gives every copy of one event the same webhook id in a session, so a receiver handles it once', async () => {
    const first = await ListenStream.open(h.baseUrl, h.merchant.apiKey, '?events=order.paid');
    const second = await ListenStream.open(h.baseUrl, h.merchant.apiKey, '?events=order.paid');
    await Promise.all([first.waitFor(1), second.waitFor(1)]);
    const paid = await h.publish('order.paid', 'card');
    // The same event again, as a dead letter's replay or a relay's re-publish past de-duplication.
    await h.env.nats.js.publish(h.env.nats.subject('order.paid'), JSON.stringify(paid), {
      msgID: randomUUID(),
    });

    const copies = (await first.waitFor(3)).slice(1).map((e) => e.data);
    expect(copies.map((d) => [d.id, d.headers['webhook-id']])).toEqual([
      [copies[0].id, copies[0].id],
      [copies[0].id, copies[0].id],
    ]);
    // Another session's id for it is its own (each session is its own receiver).
    const [, elsewhere] = await second.waitFor(2);
    expect(elsewhere.data.id).not.toBe(copies[0].id);
    const before = (await consumers()) - 2;
    first.close();
    second.close();
    const deadline = Date.now() + 5_000;
    while ((await consumers()) !== before && Date.now() < deadline) await sleep(50);
  });

  it('refuses live keys, unknown events and missing keys before opening anything', async () => {
    const before = await consumers();
    const live = await h.freshMerchant('live');
    const refused = await ListenStream.open(h.baseUrl, live.apiKey);
    expect(refused.response.status).toBe(403);
    expect(await refused.response.json()).toMatchObject({ code: 'BYRD403' });

    // One secret per merchant, whatever the session: a reconnecting CLI keeps verifying.
    await h.freshMerchant();
    const first = await ListenStream.open(h.baseUrl, h.merchant.apiKey);
    const again = await ListenStream.open(h.baseUrl, h.merchant.apiKey);
    const [[opened], [reopened]] = await Promise.all([first.waitFor(1), again.waitFor(1)]);
    expect(reopened.data.signingSecret).toBe(opened.data.signingSecret);
    expect(reopened.data.sessionId).not.toBe(opened.data.sessionId);
    first.close();
    again.close();

    const sandbox = await h.freshMerchant();
    const theirs = await ListenStream.open(h.baseUrl, sandbox.apiKey);
    const [[their]] = [await theirs.waitFor(1)];
    expect(their.data.signingSecret).not.toBe(opened.data.signingSecret);
    theirs.close();
    const unknown = await ListenStream.open(h.baseUrl, sandbox.apiKey, '?events=order.paid,order.shipped');
    expect(unknown.response.status).toBe(400);
    expect(await unknown.response.json()).toMatchObject({
      errors: [{ field: 'events', message: expect.stringContaining('order.shipped') }],
    });

    // Repeated or empty parameters are a list, never a crash.
    const repeated = await ListenStream.open(h.baseUrl, sandbox.apiKey, '?events=0&events=');
    expect(repeated.response.status).toBe(400);
    expect(await repeated.response.json()).toMatchObject({
      errors: [{ field: 'events', message: 'not events of the catalogue: "0"' }],
    });

    const anonymous = await fetch(`${h.baseUrl}/api/v1/webhooks/listen`);
    expect(anonymous.status).toBe(401);
    const deadline = Date.now() + 5_000;
    while ((await consumers()) !== before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await consumers()).toBe(before);
  });

  it('removes the consumer of a client that left while its session was opening (NATS slow)', async () => {
    const link = await HeldNatsLink.open();
    const slow = await WebhookHarness.start({ NATS_URL: link.url });
    try {
      const count = async () => (await slow.env.nats.jsm.consumers.list(slow.env.streamName).next()).length;
      const durableConsumers = await count();
      const starts = jest.spyOn(slow.app.get(ListenSessions), 'start'); // observed, not replaced
      link.hold();
      const { port } = new URL(slow.baseUrl);
      const client = connect(Number(port), '127.0.0.1');
      client.on('error', () => undefined);
      client.write(
        `GET /api/v1/webhooks/listen HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
          `x-api-key: ${slow.merchant.apiKey}\r\naccept: text/event-stream\r\n\r\n`,
      );
      await sleep(500); // the request is in, waiting on NATS
      client.destroy();
      await sleep(200);
      link.release();

      // Its session opens after the client has gone: it must notice and close at once.
      for (let waited = 0; starts.mock.results.length === 0 && waited < 5_000; waited += 20) await sleep(20);
      expect(starts).toHaveBeenCalledTimes(1);
      await starts.mock.results[0].value;
      for (let waited = 0; (await count()) !== durableConsumers && waited < 3_000; waited += 50)
        await sleep(50);
      expect(await count()).toBe(durableConsumers);
    } finally {
      await slow.stop();
      await link.close();
    }
  });

  it('answers 503 to a stream still opening when the service starts shutting down, which then goes on', async () => {
    const link = await HeldNatsLink.open();
    const slow = await WebhookHarness.start({ NATS_URL: link.url });
    let closed = false;
    try {
      link.hold();
      // One request on its own connection, as a CLI reconnecting opens (nothing kept alive after it).
      const { port } = new URL(slow.baseUrl);
      const client = connect(Number(port), '127.0.0.1');
      client.on('error', () => undefined);
      let received = '';
      client.on('data', (chunk: Buffer) => (received += chunk.toString()));
      const answer = new Promise<string>((resolve) =>
        client.on('close', () => resolve(received.split('\r\n')[0])),
      );
      client.write(
        `GET /api/v1/webhooks/listen HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n` +
          `x-api-key: ${slow.merchant.apiKey}\r\naccept: text/event-stream\r\n\r\n`,
      );
      await sleep(500); // the request is in, waiting on NATS
      const closing = closeInOrder(slow.app).then(() => (closed = true));
      await sleep(300); // the server has begun closing
      link.release();

      // The session opens only now: it must not hold the shutdown until the forced exit.
      await Promise.race([closing, sleep(10_000)]);
      expect(closed).toBe(true);
      expect(await answer).toBe('HTTP/1.1 503 Service Unavailable');
    } finally {
      await link.close().catch(() => undefined);
      // Its app is closed (the rest of `stop`); one whose shutdown hangs is left to the run's end.
      if (closed) {
        await slow.db.end();
        await slow.env.cleanup();
      }
    }
  }, 30_000);

  it('holds at most 25 streams of a merchant open at once, even all asked for at once; a closed one frees its place', async () => {
    const merchant = await h.freshMerchant();
    const asked = await Promise.all(
      Array.from({ length: LISTEN_SESSIONS_PER_MERCHANT + 3 }, () =>
        ListenStream.open(h.baseUrl, merchant.apiKey),
      ),
    );
    const opened = asked.filter((stream) => stream.response.status === 200);
    const refused = asked.filter((stream) => stream.response.status === 429);
    expect([opened.length, refused.length]).toEqual([LISTEN_SESSIONS_PER_MERCHANT, 3]);
    expect(refused[0].response.headers.get('retry-after')).toBe('5');
    expect(await refused[0].response.json()).toMatchObject({
      code: 'BYRD206',
      message: expect.stringContaining('listen streams'),
    });
    // Another merchant is not held back by this one's streams.
    const other = await ListenStream.open(h.baseUrl, (await h.freshMerchant()).apiKey);
    expect(other.response.status).toBe(200);
    other.close();

    opened[0].close();
    let again = await ListenStream.open(h.baseUrl, merchant.apiKey);
    for (const deadline = Date.now() + 5_000; again.response.status === 429 && Date.now() < deadline;) {
      await sleep(50);
      again = await ListenStream.open(h.baseUrl, merchant.apiKey);
    }
    expect(again.response.status).toBe(200);
    for (const stream of [...opened, again]) stream.close();
  });

  it('ends an open stream within seconds of its API key being revoked, and sends it nothing after', async () => {
    const others = h.merchant;
    const owner = await h.freshMerchant();
    try {
      const stream = await ListenStream.open(h.baseUrl, owner.apiKey, '?events=order.paid');
      await stream.waitFor(1);
      expect(await h.env.revokeKey(owner.apiKey)).toBe(true);
      expect(await stream.ended(5_000)).toBe(true);
      await h.publish('order.paid', 'card');
      await new Promise((r) => setTimeout(r, 300));
      expect(stream.events.map((e) => e.event)).toEqual(['ready']);
      // Its CLI's reconnect is refused.
      expect((await ListenStream.open(h.baseUrl, owner.apiKey)).response.status).toBe(401);
    } finally {
      h.merchant = others;
    }
  });

  it('ends the stream of a client that stops reading, instead of buffering its events without bound', async () => {
    const stalling = await WebhookHarness.start({ LISTEN_DRAIN_TIMEOUT_MS: '500' });
    const socket = connect(Number(new URL(stalling.baseUrl).port), '127.0.0.1');
    try {
      const count = async () =>
        (await stalling.env.nats.jsm.consumers.list(stalling.env.streamName).next()).length;
      const before = await count();
      socket.write(
        `GET /api/v1/webhooks/listen HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `x-api-key: ${stalling.merchant.apiKey}\r\naccept: text/event-stream\r\n\r\n`,
      );
      let seen = '';
      await new Promise<void>((resolve) => {
        const onData = (chunk: Buffer) => {
          seen += chunk.toString();
          if (!seen.includes('event: ready')) return;
          socket.off('data', onData);
          socket.pause(); // reads nothing more: the kernel's buffers fill, then the server's
          resolve();
        };
        socket.on('data', onData);
      });
      expect(await count()).toBe(before + 1);

      // Events keep coming; the server must stop taking them from NATS and let the client go.
      let published = 0;
      while ((await count()) > before && published < 30_000) {
        await Promise.all(Array.from({ length: 200 }, () => stalling.publish('order.paid', 'card')));
        published += 200;
      }
      expect(await count()).toBe(before);
      expect(published).toBeLessThan(30_000);
    } finally {
      socket.destroy();
      await stalling.stop();
    }
  }, 120_000);

  it('ends open streams when the service shuts down, instead of holding the shutdown', async () => {
    const stream = await ListenStream.open(h.baseUrl, h.merchant.apiKey);
    await stream.waitFor(1);
    const restarted = await WebhookHarness.start();
    const other = await ListenStream.open(restarted.baseUrl, restarted.merchant.apiKey);
    await other.waitFor(1);
    const startedAt = Date.now();
    await restarted.stop();
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(await other.ended()).toBe(true);
    stream.close();
  });
});
