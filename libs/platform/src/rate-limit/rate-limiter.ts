import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Kvm, type KV } from '@nats-io/kv';
import ipaddr from 'ipaddr.js';
import { guidOf } from '@byrd/contracts';
import { ApiError, ErrorKind } from '../errors/api-error.js';
import { isKvWriteConflict, type NatsContext } from '../messaging/nats.js';
import { NATS_CONTEXT } from '../messaging/tokens.js';
import { RATE_LIMIT_CONFIG, type RateLimitConfig } from './rate-limit.config.js';

/**
 * Limit scopes: every API call of the hosted form's backend counts in `api`; payment attempts also
 * count in `payments`, by client, and in `order-payments`, by the order they pay and the checkout key
 * they present (whatever address they come from). `payment-creates` (by client) and
 * `order-payment-creates` (by order) count, the same ways and to the same limits, the payments an
 * order link creates without a card (a two-step payment's first step, which tries no card): each is a
 * row and two events, and unlimited they flood the order, or, with a new order pair each, the service.
 */
export type RateLimitScope =
  'api' | 'payments' | 'order-payments' | 'payment-creates' | 'order-payment-creates';

/** The scopes counted by the order paid (with its checkout key), not by the client's address. */
const BY_ORDER: ReadonlySet<RateLimitScope> = new Set(['order-payments', 'order-payment-creates']);

/** A count lost to another replica's write is taken again; past this many tries the call is refused. */
const MAX_COUNT_TRIES = 20;

/**
 * Window counts per client address and scope, kept in a NATS KV bucket that every replica shares
 * (RATE_LIMIT_BUCKET): a client gets the limit once, however many replicas the Ingress spreads it
 * over. Each count is a compare-and-set of the key's revision, so concurrent requests on several
 * replicas never count as one. The address comes from Fastify's `request.ip`, which believes only
 * the TRUSTED_PROXIES entries of X-Forwarded-For. Keys carry a hash of the address, never the
 * address itself; the bucket's TTL removes the keys of clients gone quiet.
 */
@Injectable()
export class RateLimiter implements OnApplicationBootstrap {
  private readonly logger = new Logger(RateLimiter.name);
  private kv?: KV;

  constructor(
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(RATE_LIMIT_CONFIG) private readonly config: RateLimitConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Two windows: a key outlives the window it counts, whichever replica created the bucket.
    const ttl = 2 * this.config.RATE_LIMIT_WINDOW_MS;
    this.kv = await ensureRateLimitBucket(this.nats, this.config.RATE_LIMIT_BUCKET, {
      ttlMs: ttl,
      replicas: this.config.EVENTS_STREAM_REPLICAS,
      log: (message) => this.logger.log(message),
    });
  }

  /**
   * Counts the request in each scope; over a limit → 429 BYRD206 (blocked by velocity) with
   * Retry-After. `order` is what the BY_ORDER scopes count by (the order and the key presented).
   */
  async check(request: FastifyRequest, scopes: readonly RateLimitScope[], order?: string): Promise<void> {
    const client = hashed(clientOf(request.ip));
    for (const scope of scopes) {
      const subject = BY_ORDER.has(scope) ? order && hashed(order) : client;
      if (!subject) continue;
      const now = Date.now();
      const window = await this.count(`${scope}.${subject}`, now);
      if (window.count > this.limitOf(scope)) {
        const about = BY_ORDER.has(scope) ? 'on this order' : 'from this address';
        throw new ApiError(ErrorKind.RateLimited, `Too many requests ${about}; retry later`, {
          retryAfter: Math.max(1, Math.ceil((window.start + this.config.RATE_LIMIT_WINDOW_MS - now) / 1000)),
        });
      }
    }
  }

  private limitOf(scope: RateLimitScope): number {
    if (scope === 'payments' || scope === 'payment-creates') return this.config.RATE_LIMIT_PAYMENTS_MAX;
    if (BY_ORDER.has(scope)) return this.config.RATE_LIMIT_ORDER_PAYMENTS_MAX;
    if (this.config.RATE_LIMIT_MAX === undefined) throw new Error('The api scope needs RATE_LIMIT_MAX');
    return this.config.RATE_LIMIT_MAX;
  }

  /**
   * Adds one to the key's window (compare-and-set) and returns it. A window starts at its first
   * request and lasts RATE_LIMIT_WINDOW_MS; the first request after it starts the next one.
   */
  private async count(key: string, now: number): Promise<CountWindow> {
    const kv = this.kv;
    if (!kv) throw new Error('Rate limiter used before the module started');
    for (let attempt = 1; attempt <= MAX_COUNT_TRIES; attempt++) {
      try {
        const entry = await kv.get(key);
        const current = entry?.operation === 'PUT' ? parseWindow(entry.string()) : null;
        const next =
          current && now - current.start < this.config.RATE_LIMIT_WINDOW_MS
            ? { start: current.start, count: current.count + 1 }
            : { start: now, count: 1 };
        const value = JSON.stringify(next);
        if (entry) await kv.update(key, value, entry.revision);
        else await kv.create(key, value);
        return next;
      } catch (error) {
        if (!isKvWriteConflict(error)) {
          this.logger.warn(`Rate limit count failed: ${String(error)}`);
          throw new ApiError(ErrorKind.Unavailable, 'The rate limit store is unavailable; retry later', {
            retryAfter: 1,
          });
        }
      }
    }
    // So many concurrent requests from one address that the count never settled: that is a flood.
    throw new ApiError(ErrorKind.RateLimited, 'Too many requests from this address; retry later', {
      retryAfter: 1,
    });
  }
}

/**
 * The bucket of the rate-limit counts, created when missing, with `replicas` copies (the services'
 * EVENTS_STREAM_REPLICAS: every hosted-form call and `?checkoutKey=` payment counts here, so one
 * copy would take checkout down with the one NATS server that holds it) and a TTL of `ttlMs`. An
 * existing bucket is brought to at least that many copies and that TTL (more copies, or a longer
 * one, another service's longer window, are kept): the library binds to a bucket as it is. Used by each service at
 * boot and by `cli nats provision`.
 */
export async function ensureRateLimitBucket(
  nats: NatsContext,
  bucket: string,
  { ttlMs, replicas = 1, log }: { ttlMs: number; replicas?: number; log?: (message: string) => void },
): Promise<KV> {
  const create = () => new Kvm(nats.nc).create(bucket, { history: 1, ttl: ttlMs, replicas });
  // Once more when another service created it meanwhile with another window (another TTL): the
  // second look finds the bucket and binds to it.
  const kv = await create().catch(create);
  const { config } = (await kv.status()).streamInfo;
  const maxAge = ttlMs * 1_000_000;
  if (config.max_age < maxAge || config.num_replicas < replicas) {
    const copies = Math.max(config.num_replicas, replicas);
    await nats.jsm.streams.update(config.name, {
      ...config,
      max_age: Math.max(config.max_age, maxAge),
      num_replicas: copies,
    });
    log?.(`${bucket}: brought to ${copies} copies and a TTL of at least ${ttlMs} ms`);
  }
  return kv;
}

/**
 * What `order-payments` counts by: the order id with the checkout key presented (undefined unless both
 * are GUIDs: the attempt then counts per client only). Order ids are not secret (return URLs carry
 * them) and limits are checked before the key is: counting by the id alone would let anyone fill the
 * shopper's window with wrong keys. Only the real key reaches the order's own count. Read as the DTOs
 * read a GUID (trimmed, any case), so writing the same ids otherwise is the same order's count.
 */
export function orderPaymentsKey(orderId: unknown, checkoutKey: unknown): string | undefined {
  const [order, key] = [guidOf(orderId), guidOf(checkoutKey)];
  return order && key ? `${order}:${key}` : undefined;
}

/**
 * Who a client is, for its counts: its IPv4 address (also when written IPv4-mapped), or the /64 of
 * its IPv6 address: a host gets a whole /64 and may take a new address in it for every request.
 */
export function clientOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}

/** Keys carry a hash, never the address, order or checkout key itself. */
function hashed(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}

interface CountWindow {
  /** When the window began (ms since the epoch). */
  start: number;
  count: number;
}

function parseWindow(text: string): CountWindow | null {
  try {
    const parsed = JSON.parse(text) as Partial<CountWindow>;
    return Number.isFinite(parsed.start) && Number.isInteger(parsed.count) ? (parsed as CountWindow) : null;
  } catch {
    return null;
  }
}
