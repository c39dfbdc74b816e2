import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, ErrorKind } from '@byrd/platform';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';

/** Limit scopes: every API call counts in `api`; payment attempts also count in `payments`. */
export type RateLimitScope = 'api' | 'payments';

type Limiter = (request: FastifyRequest) => Promise<{ isExceeded: boolean; ttlInSeconds: number }>;

/**
 * Per client IP counts of @fastify/rate-limit, in this replica's memory: with N replicas a client
 * gets up to N times the limit (the Ingress spreads it). The client IP is the one the edge or
 * Ingress reports in X-Forwarded-For (Fastify's trustProxy).
 */
@Injectable()
export class RateLimiter implements OnApplicationBootstrap {
  private readonly limiters = new Map<RateLimitScope, Limiter>();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Only its limiter factory is used (no global hook): the guard applies it to the API routes.
    // At bootstrap, once Nest's routes have Nest's error handler (see CheckoutPageMount).
    await fastify.register(fastifyRateLimit, { global: false, cache: 10_000 });
    const limits: Record<RateLimitScope, number> = {
      api: this.config.RATE_LIMIT_MAX,
      payments: this.config.RATE_LIMIT_PAYMENTS_MAX,
    };
    for (const [scope, max] of Object.entries(limits) as [RateLimitScope, number][]) {
      this.limiters.set(
        scope,
        fastify.createRateLimit({
          max,
          timeWindow: this.config.RATE_LIMIT_WINDOW_MS,
          keyGenerator: (request) => `${scope}:${request.ip}`,
        }) as Limiter,
      );
    }
  }

  /** Counts the request in each scope; over a limit → 429 BYRD206 (blocked by velocity) with Retry-After. */
  async check(request: FastifyRequest, scopes: readonly RateLimitScope[]): Promise<void> {
    for (const scope of scopes) {
      const limiter = this.limiters.get(scope);
      if (!limiter) throw new Error(`Rate limiter "${scope}" used before the module started`);
      const outcome = await limiter(request);
      if (outcome.isExceeded) {
        throw new ApiError(ErrorKind.RateLimited, 'Too many requests from this address; retry later', {
          retryAfter: Math.max(1, outcome.ttlInSeconds),
        });
      }
    }
  }
}
