import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@byrd/platform';
import { webhookConfigSchema } from '../src/config.js';
import { WebhookHttpSender } from '../src/egress/http-sender.js';
import { RefusedUrlError, UrlGuard } from '../src/egress/url-guard.js';
import { Receiver } from './receiver.js';

const TIMEOUT_MS = 1_000;
const SLOW_LOOKUPS = 8;

/**
 * A real name server on 127.0.0.1 (UDP): names under `slow.test` are a merchant's whose name server
 * never answers (queries are counted, never answered); `fast.test` and `other.test` are 127.0.0.1;
 * any other name does not exist.
 */
class NameServer {
  readonly silentQueries: string[] = [];

  private constructor(
    private readonly socket: Socket,
    readonly address: string,
  ) {}

  static async start(): Promise<NameServer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const server = new NameServer(socket, `127.0.0.1:${socket.address().port}`);
    socket.on('message', (query, from) => {
      const answer = server.answer(query);
      if (answer) socket.send(answer, from.port, from.address);
    });
    return server;
  }

  private answer(query: Buffer): Buffer | null {
    const labels: string[] = [];
    let at = 12;
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('ascii'));
      at += query[at] + 1;
    }
    const questionEnd = at + 5;
    const type = query.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    if (name.endsWith('.slow.test')) {
      this.silentQueries.push(name);
      return null;
    }
    const known = name === 'fast.test' || name === 'other.test';
    const records = known && type === 1 ? [Buffer.from([127, 0, 0, 1])] : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8580 | (known ? 0 : 3), 2); // answer, authoritative, recursion; NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((rdata) => {
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the question's name
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([record, rdata]);
    });
    return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(resolve));
  }
}

/**
 * Holds every thread of libuv's pool in open(2) of a FIFO nobody writes, as getaddrinfo holds them
 * while a name server does not answer. `release` lets them go.
 */
async function occupyThreadPool() {
  const dir = mkdtempSync(path.join(tmpdir(), 'threadpool-'));
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fifos = Array.from({ length: size }, (_, i) => path.join(dir, `fifo-${i}`));
  const opening: Promise<FileHandle>[] = [];
  for (const fifo of fifos) {
    execFileSync('mkfifo', [fifo]);
    opening.push(open(fifo, 'r'));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  return async () => {
    for (const fifo of fifos) closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    for (const handle of await Promise.all(opening)) await handle.close();
    rmSync(dir, { recursive: true });
  };
}

const STILL_WAITING = 'still waiting';
/** `promise`'s outcome, or STILL_WAITING when it has none after `ms`. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<PromiseSettledResult<T> | string> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.allSettled([promise]).then(([result]) => result),
    new Promise<string>((resolve) => (timer = setTimeout(resolve, ms, STILL_WAITING))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Receivers' host names are resolved without libuv's thread pool and within WEBHOOK_TIMEOUT_MS: a
 * merchant whose name server never answers costs only its own lookups, not other merchants'
 * deliveries or settings.
 */
describe('resolving receivers whose name server never answers', () => {
  let names: NameServer;
  let receiver: Receiver;
  let guard: UrlGuard;
  let sender: WebhookHttpSender;

  beforeAll(async () => {
    names = await NameServer.start();
    receiver = await Receiver.start();
    const config = loadConfig(webhookConfigSchema, {
      DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
      WEBHOOK_SECRETS_KEYS: randomBytes(32).toString('base64'),
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,fast.test',
    });
    guard = new UrlGuard(config, [names.address]);
    sender = new WebhookHttpSender(guard, config);
  });
  afterAll(async () => {
    await sender?.onApplicationShutdown();
    guard?.onApplicationShutdown();
    await receiver?.stop();
    await names?.stop();
  });

  const port = () => new URL(receiver.url).port;
  const deliver = (host: string) =>
    sender.post({
      url: `http://${host}:${port()}/hooks`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ host }),
    });

  it("delivers to other receivers while a merchant's lookups wait, and ends those lookups in time", async () => {
    const started = performance.now();
    const slow = Array.from({ length: SLOW_LOOKUPS }, (_, i) => {
      const lookup = guard.vet(`https://shop-${i}.slow.test/hooks`, 'sandbox');
      return lookup.then(
        () => ({ error: null, ms: performance.now() - started }),
        (error: Error) => ({ error, ms: performance.now() - started }),
      );
    });
    let slowEnded = false;
    void Promise.all(slow).then(() => (slowEnded = true));
    const deadline = Date.now() + TIMEOUT_MS / 2;
    while (names.silentQueries.length < SLOW_LOOKUPS && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    // Every slow name was asked of its name server (A and AAAA), and is waiting for an answer.
    expect(new Set(names.silentQueries).size).toBe(SLOW_LOOKUPS);

    const literal = await deliver('127.0.0.1');
    const named = await deliver('fast.test');
    const loopbackByName = guard.resolve('other.test').then(
      () => 'accepted',
      (error: Error) => error.message,
    );
    const missing = guard.vet('https://nowhere.test/hooks', 'sandbox').then(
      () => 'accepted',
      (error: Error) => error.message,
    );
    expect([literal.statusCode, literal.error]).toEqual([200, null]);
    expect([named.statusCode, named.error]).toEqual([200, null]);
    expect(receiver.received.map((r) => r.json.host)).toEqual(['127.0.0.1', 'fast.test']);
    // Resolved addresses are still vetted, and a name that does not exist still says so.
    expect(await loopbackByName).toBe('is refused: other.test resolves to 127.0.0.1 is a loopback address');
    expect(await missing).toBe('host nowhere.test does not resolve (ENOTFOUND)');
    expect(slowEnded).toBe(false);

    const ended = await Promise.all(slow);
    for (const [i, { error, ms }] of ended.entries()) {
      expect(error).toBeInstanceOf(RefusedUrlError);
      expect(error?.message).toBe(
        `host shop-${i}.slow.test does not resolve (ETIMEOUT: its name server did not answer within ${TIMEOUT_MS} ms)`,
      );
      // After the configured time, not before, and not the resolver's own much longer default.
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(TIMEOUT_MS * 3);
    }
    const delivery = await deliver('shop-x.slow.test');
    expect(delivery.statusCode).toBeNull();
    expect(receiver.received).toHaveLength(2);
  });

  it("resolves without libuv's thread pool: while getaddrinfo would queue, lookups and deliveries go on", async () => {
    receiver.received.length = 0;
    const release = await occupyThreadPool();
    let outcomes: (PromiseSettledResult<unknown> | string)[];
    try {
      outcomes = await Promise.all([
        settledWithin(guard.resolve('fast.test'), TIMEOUT_MS * 2),
        settledWithin(guard.resolve('localhost'), TIMEOUT_MS * 2),
        settledWithin(deliver('fast.test'), TIMEOUT_MS * 2),
      ]);
    } finally {
      await release();
    }
    const [fast, localhost, delivery] = outcomes;
    expect(fast).toEqual({ status: 'fulfilled', value: [{ address: '127.0.0.1', family: 4 }] });
    // /etc/hosts names resolve as before (there, localhost is loopback: refused, not allow-listed).
    expect(localhost).toEqual({
      status: 'rejected',
      reason: expect.objectContaining({
        message: expect.stringMatching(
          /^is refused: localhost resolves to (127\.0\.0\.1|::1) is a loopback address$/,
        ),
      }),
    });
    expect(delivery).toEqual({ status: 'fulfilled', value: expect.objectContaining({ statusCode: 200 }) });
    expect(receiver.received.map((r) => r.json.host)).toEqual(['fast.test']);
  });
});
