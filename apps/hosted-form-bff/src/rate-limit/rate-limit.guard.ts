import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { CHECKOUT_KEY_HEADER } from '@byrd/contracts';
import { orderPaymentsKey, RateLimiter, type RateLimitScope } from '@byrd/platform';

const RATE_LIMIT_SCOPE = 'checkout:rate-limit-scope';

/** Also counts the route in a stricter scope than the API's (e.g. payment attempts). */
export const RateLimited = (scope: 'payments') => SetMetadata(RATE_LIMIT_SCOPE, scope);

/** Every API call counts against the client IP's API limit, and its route's own scope if any. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.reflector.get<RateLimitScope | undefined>(RATE_LIMIT_SCOPE, context.getHandler());
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // A payment attempt counts for its order too: a card tester may come from many addresses.
    const scopes: RateLimitScope[] =
      scope === 'payments' ? ['api', 'payments', 'order-payments'] : scope ? ['api', scope] : ['api'];
    await this.limiter.check(request, scopes, orderBucketOf(request));
    return true;
  }
}

/** What `order-payments` counts by: the order of the path with the checkout key presented. */
function orderBucketOf(request: FastifyRequest): string | undefined {
  const { orderId } = (request.params ?? {}) as { orderId?: unknown };
  const header = request.headers[CHECKOUT_KEY_HEADER];
  return orderPaymentsKey(orderId, Array.isArray(header) ? header[0] : header);
}
