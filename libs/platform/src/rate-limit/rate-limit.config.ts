import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/**
 * The payment-attempt limits of every service that takes payments from browsers holding an order's
 * checkout key (the hosted form's backend, payments' `?checkoutKey=` routes), for their config
 * schemas: one definition, so they default alike. With one bucket (the default, and the chart's)
 * they count in the same keys: an order's attempts through the form and through the SDK's routes
 * share one count.
 */
export const paymentAttemptLimitSettings = {
  /** NATS KV bucket of the rate-limit counts, shared by every replica (created when missing). */
  RATE_LIMIT_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('RATE_LIMITS'),
  /** Rate-limit window (per client address or order, over all replicas). */
  RATE_LIMIT_WINDOW_MS: positiveInt(60_000),
  /**
   * Payment attempts one client may make per window (an IPv6 client counts by its /64, which it owns
   * whole): stops card testing.
   */
  RATE_LIMIT_PAYMENTS_MAX: positiveInt(10),
  /**
   * Payment attempts on one order with its checkout key per window, from any address: card testing
   * through one order link (attempts with a wrong key never count against the order).
   */
  RATE_LIMIT_ORDER_PAYMENTS_MAX: positiveInt(10),
};

/** What RateLimiter reads of its service's config. */
export interface RateLimitConfig {
  RATE_LIMIT_BUCKET: string;
  RATE_LIMIT_WINDOW_MS: number;
  RATE_LIMIT_PAYMENTS_MAX: number;
  RATE_LIMIT_ORDER_PAYMENTS_MAX: number;
  /** Calls one client may make to the API per window: the `api` scope, for a service that counts it. */
  RATE_LIMIT_MAX?: number;
  /** Copies of the bucket on a NATS cluster: the service's EVENTS_STREAM_REPLICAS (1 when absent). */
  EVENTS_STREAM_REPLICAS?: number;
}

export const RATE_LIMIT_CONFIG = Symbol('RATE_LIMIT_CONFIG');
