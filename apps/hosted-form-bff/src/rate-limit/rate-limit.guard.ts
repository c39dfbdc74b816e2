import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { RateLimiter, type RateLimitScope } from './rate-limiter.js';

const RATE_LIMIT_SCOPE = 'checkout:rate-limit-scope';

/** Also counts the route in a stricter scope than the API's (e.g. payment attempts). */
export const RateLimited = (scope: Exclude<RateLimitScope, 'api'>) => SetMetadata(RATE_LIMIT_SCOPE, scope);

/** Every API call counts against the client IP's API limit, and its route's own scope if any. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.reflector.get<RateLimitScope | undefined>(RATE_LIMIT_SCOPE, context.getHandler());
    await this.limiter.check(
      context.switchToHttp().getRequest<FastifyRequest>(),
      scope ? ['api', scope] : ['api'],
    );
    return true;
  }
}
